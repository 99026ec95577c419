package ledger

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The SQLSTATEs that make a ledger error an outage: the five the hand-written table named (a
// connection exception of class 08 by prefix), and none of the refusals next to them.
func TestIsUnavailable_BySQLState(t *testing.T) {
	for code, want := range map[string]bool{
		"57P01": true,  // admin_shutdown
		"57P02": true,  // crash_shutdown
		"57P03": true,  // cannot_connect_now
		"53300": true,  // too_many_connections
		"08000": true,  // connection_exception
		"08003": true,  // connection_does_not_exist
		"08006": true,  // connection_failure
		"08001": true,  // sqlclient_unable_to_establish_sqlconnection
		"08004": true,  // sqlserver_rejected_establishment_of_sqlconnection
		"08P01": true,  // protocol_violation
		"57P04": false, // database_dropped
		"57014": false, // query_canceled
		"53100": false, // disk_full
		"53200": false, // out_of_memory
		"42501": false, // insufficient_privilege
		"28P01": false, // invalid_password
		"23505": false, // unique_violation
		"40001": false, // serialization_failure
		"XX000": false, // internal_error
	} {
		err := fmt.Errorf("recording run r: %w", &pgconn.PgError{Code: code})
		if got := isUnavailable(err); got != want {
			t.Errorf("isUnavailable(SQLSTATE %s) = %t, want %t", code, got, want)
		}
	}
}
