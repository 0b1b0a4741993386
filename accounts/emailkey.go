package accounts

// EmailKey returns the key an account's e-mail address is stored under (the address as
// entered, trimmed and lower-cased), for finding the account of an address without
// signing in (the operator role is granted by address); ErrInvalidEmail for an address
// this site does not accept.
func EmailKey(email string) (string, error) {
	_, key, err := parseAddress(email)
	return key, err
}
