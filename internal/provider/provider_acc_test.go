package provider
