package provider

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/artemis-studio/terraform-provider-artemis/internal/testenv"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the Terraform CLI used by
// acceptance tests, so that terraform init needs no registry.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"artemis": providerserver.NewProtocol6WithError(New("test")()),
}

// testAccProviderBlock returns a provider block naming the given brokers of the test
// environment (all of them when none are given), logged in as the transfer user. The target
// broker's amqps endpoint is listed after its amqp one, with the environment's CA.
func testAccProviderBlock(env *testenv.Env, names ...string) string {
	if len(names) == 0 {
		for n := range env.Brokers {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var b strings.Builder
	b.WriteString("provider \"artemis\" {\n  brokers = {\n")
	for _, n := range names {
		br := env.Brokers[n]
		urls := []string{fmt.Sprintf("%q", br.AMQPURL)}
		if br.AMQPSURL != "" {
			urls = append(urls, fmt.Sprintf("%q", br.AMQPSURL))
		}
		fmt.Fprintf(&b, "    %q = {\n", n)
		fmt.Fprintf(&b, "      amqp_urls      = [%s]\n", strings.Join(urls, ", "))
		fmt.Fprintf(&b, "      management_url = %q\n", br.ManagementURL)
		fmt.Fprintf(&b, "      username       = %q\n", env.TransferUser)
		fmt.Fprintf(&b, "      password       = %q\n", env.TransferPassword)
		if br.AMQPSURL != "" && env.TLSCAFile != "" {
			fmt.Fprintf(&b, "      tls            = { ca_cert_file = %q }\n", env.TLSCAFile)
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}
