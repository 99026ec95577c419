# The provider's address and the versions this configuration accepts. Until a release is on
# the Registry, `make install` in the provider's repository puts a build where `terraform init`
# finds it (see the README).
terraform {
  required_providers {
    artemis = {
      source  = "artemis-studio/artemis"
      version = "~> 0.1"
    }
  }
}
