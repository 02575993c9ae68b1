// Whether a space's sshd answers, as `space info` and the space page say it: a TCP connect is
// not enough (a proxy or a firewall may accept every connect), the server's SSH
// identification line is.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace bowline::engine {

// How long a probe waits for the identification line once connected. Long enough for an
// sshd that is busy or does a reverse DNS lookup first; short, since the space page waits.
inline constexpr std::chrono::milliseconds kBannerWait{2000};

// The state of port 22 through `connect` (a connected socket's fd, which the probe closes):
// "open" when the peer sends an SSH identification line within `banner_wait`, "no banner"
// when the connection was taken but no such line came (something else than an sshd accepts
// it), "closed" when the connect was refused (nothing listens), "no route" when it failed
// otherwise (no answer in time, unreachable). Errors other than a failed connect
// (util::ConnectError) are the caller's.
std::string sshd_state(const std::function<int()>& connect,
                       std::chrono::milliseconds banner_wait = kBannerWait);

}  // namespace bowline::engine
