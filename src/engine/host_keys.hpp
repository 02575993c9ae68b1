// Each space's SSH host key, made by bowline when the space is made and given to the guest
// through cloud-init (user-data ssh_keys), so every client can know it before it first
// connects: no trust on first use. Why bowline writes the OpenSSH key format itself: a key
// made in-process never lands in a temporary file, and no ssh-keygen has to run per space;
// the tests check every key with the real ssh-keygen.
#pragma once

#include <string>

namespace bowline::engine {

struct HostKey {
  std::string private_key;  // "-----BEGIN OPENSSH PRIVATE KEY-----" ... (unencrypted)
  std::string public_line;  // "ssh-ed25519 AAAA... comment"
};

// A new ed25519 key pair (libsodium's random source).
HostKey make_host_key(const std::string& comment);

// What is wrong with a key pair that came from outside (an imported archive), or empty: the
// public line must be one line "ssh-ed25519 BASE64 [comment]" with printable characters
// only (it goes into clients' known_hosts files), and the private key an unencrypted OpenSSH
// ed25519 key whose seed makes that very public key.
std::string host_key_problem(const HostKey& key);

// "SHA256:..." of an OpenSSH public key line, as `ssh-keygen -l` prints it; empty when the
// line is not one.
std::string fingerprint(const std::string& public_line);

}  // namespace bowline::engine
