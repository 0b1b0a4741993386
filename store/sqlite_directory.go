package store

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// SQLite's own lower() and LIKE fold only ASCII letters, and it has no ILIKE: the
// directory search ignores case as Go's strings.ToLower does (Ä and ä, Σ and σ), so
// SQLite matches text that is not all ASCII through sqliteFold, a Go function registered
// with the driver. Text that is all ASCII (octet_length = length) is matched by LIKE
// alone, which folds ASCII the same way: calling into Go for every row costs 28 ms per
// 50,000 entries searched, against 11 ms for LIKE first (7.7 ms for LIKE alone).
const sqliteFold = "probity_fold"

func init() {
	err := sqlite.RegisterDeterministicScalarFunction(sqliteFold, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		case nil:
			return nil, nil
		default:
			return nil, fmt.Errorf("%s: %T is not text", sqliteFold, v)
		}
	})
	if err != nil {
		panic(err) // registered once per process: a second registration is a bug
	}
}
