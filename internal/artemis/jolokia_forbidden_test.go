package artemis

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A read of several attributes with ignoreErrors answers an attribute the user's role may not
// read (JMX RBAC: no get* or is*) with an error string in its place, as Artemis 2.40 does. The
// read is refused as forbidden, naming the attribute and what to grant, rather than failing
// later on a value of the wrong type; a missing attribute is still left out.
func TestRead_AnAttributeTheRoleMayNotReadIsForbidden(t *testing.T) {
	body := `[{"status":200,"value":{"Version":"2.40.0","Missing":"ERROR: javax.management.AttributeNotFoundException : No such attribute: Missing",` +
		`"IDCacheSize":"ERROR: User not authorized to access attribute: IDCacheSize (class java.lang.SecurityException)"}}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c, err := New(Config{Name: "b", ManagementURL: srv.URL, Username: "reader", Password: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.read(context.Background(), "m", "Version", "Missing", "IDCacheSize")
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("want ErrForbidden, got %v", err)
	}
	for _, w := range []string{`user "reader"`, "IDCacheSize", "get* and is*", "management.xml"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}

	body = `[{"status":200,"value":{"Version":"2.40.0","Missing":"ERROR: javax.management.AttributeNotFoundException : No such attribute: Missing"}}]`
	values, err := c.read(context.Background(), "m", "Version", "Missing")
	if err != nil || len(values) != 1 || string(values["Version"]) != `"2.40.0"` {
		t.Fatalf("got %v, %v; want only Version", values, err)
	}
}
