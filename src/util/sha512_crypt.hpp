// SHA-512 crypt(3) ("$6$salt$hash"): the form /etc/shadow and cloud-init's `passwd` take, so
// bowline keeps only this of a service password and hands the guest the same string.
#pragma once

#include <string>

namespace bowline::util {

// `salt`: up to 16 characters of [./0-9A-Za-z]. std::runtime_error when crypt(3) refuses.
std::string sha512_crypt(const std::string& password, const std::string& salt);
// 16 random salt characters.
std::string random_crypt_salt();
// Whether `text` has the shape of a SHA-512 crypt hash.
bool is_sha512_crypt(const std::string& text);

}  // namespace bowline::util
