package simulator

import "net/http"

// ssoLoginPage is what a single-sign-on proxy (oauth2-proxy, Keycloak
// gatekeeper, a corporate portal) answers in place of the API once the
// session behind a token has expired.
const ssoLoginPage = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<form method="post" action="/login">
<h1>Sign in to continue</h1>
<label>User <input name="username"></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button>
</form>
</body>
</html>
`

// writeRefusal answers a call made without a valid token: the console's
// own refusal, or what the SSO proxy of Config.SSOProxy sends instead.
func (s *Simulator) writeRefusal(w http.ResponseWriter, r *http.Request) {
	switch s.cfg.SSOProxy {
	case SSOLoginPage:
		s.writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", []byte(ssoLoginPage))
	case SSORedirect:
		w.Header().Set("Location", "/login")
		s.writeBody(w, r, http.StatusFound, "text/html; charset=utf-8", []byte(`<a href="/login">Found</a>.`+"\n"))
	default:
		s.writeMessage(w, r, s.cfg.RefusalStatus, refusalText)
	}
}
