terraform {
  required_providers {
    artemis = {
      source  = "artemis-studio/artemis"
      version = "~> 0.1"
    }
  }
}
