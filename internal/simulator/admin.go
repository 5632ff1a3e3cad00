package simulator

import "net/http"

// EnableAdmin makes the server answer the /sim/ admin API too.
func (s *Simulator) EnableAdmin() { s.admin = true }

func (s *Simulator) serveAdmin(w http.ResponseWriter, r *http.Request) {
	http.NotFound(w, r)
}
