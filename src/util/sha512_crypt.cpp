#include "util/sha512_crypt.hpp"

#include <crypt.h>

#include <algorithm>
#include <random>
#include <stdexcept>

namespace bowline::util {

namespace {
constexpr char kSaltAlphabet[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
}

std::string sha512_crypt(const std::string& password, const std::string& salt) {
  const std::string setting = "$6$" + salt + "$";
  crypt_data data{};
  const char* hashed = crypt_r(password.c_str(), setting.c_str(), &data);
  if (!hashed || hashed[0] == '*') throw std::runtime_error("crypt(3) failed to hash the password");
  return hashed;
}

std::string random_crypt_salt() {
  std::random_device random;  // getrandom(2) on Linux
  std::string salt;
  for (int i = 0; i < 16; ++i) salt += kSaltAlphabet[random() % 64];
  return salt;
}

bool is_sha512_crypt(const std::string& text) {
  if (text.rfind("$6$", 0) != 0) return false;
  const auto end = text.find('$', 3);
  if (end == std::string::npos || end == 3) return false;
  const auto valid = [](char c) {
    return std::find(std::begin(kSaltAlphabet), std::end(kSaltAlphabet) - 1, c) !=
           std::end(kSaltAlphabet) - 1;
  };
  return std::all_of(text.begin() + 3, text.begin() + static_cast<long>(end), valid) &&
         text.size() - end - 1 == 86 &&
         std::all_of(text.begin() + static_cast<long>(end) + 1, text.end(), valid);
}

}  // namespace bowline::util
