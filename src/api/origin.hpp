// Whose page a browser's request comes from. Browsers send Origin on every WebSocket handshake
// and on every fetch that changes state; a page of another site must not ride the browser's
// session cookie into this server (cross-site request forgery, cross-site WebSocket hijacking).
#pragma once

#include "api/http.hpp"
#include "api/router.hpp"

namespace bowline::api {

// The request's Origin is this server's: its scheme and the Host the browser used.
bool same_origin(const Request& request);

// HttpError 403 unless the request carries this server's Origin. Only a client with an API
// token (the CLI), which no web page can make a browser send, may leave it out; one it does
// send must be this server's too.
void check_origin(const Caller& caller, const Request& request);

// For requests that need no credential (logging in): an Origin, when there is one, must be
// this server's, so that no other site logs a browser in as someone else.
void check_origin_if_sent(const Request& request);

}  // namespace bowline::api
