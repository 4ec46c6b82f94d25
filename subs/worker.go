package subs

// Worker is the delivery worker; see the API list in api.go.
type Worker struct {
	opts Options
}
