// What operators set on a node that must outlive a server restart: whether it is cordoned (no
// new space is placed or moved there) and why. Nodes themselves are configuration (settings);
// a row exists only for a node someone cordoned once.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "store/repository.hpp"

namespace bowline::store {

class NodeStateRepository : public Repository {
 public:
  using Repository::Repository;

  void set_cordoned(std::string_view node, bool cordoned, std::string_view reason);
  // Every cordoned node with its reason.
  std::map<std::string, std::string> cordoned();
};

}  // namespace bowline::store
