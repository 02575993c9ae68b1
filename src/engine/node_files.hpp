// Where a libvirt node keeps a space's files (its overlay, seed, console log and NVRAM): on the
// server's own file system, for this host's libvirt (LocalNodeFiles), or in a libvirt storage
// pool of a host elsewhere, reached through libvirt alone (PoolNodeFiles). LibvirtNode asks this
// seam, never the file system, so the same node code runs spaces on either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/plan.hpp"

namespace bowline::engine {

// A base image: the server's cached copy, and the path the node's host opens.
struct BaseImage {
  std::string local;
  std::string on_host;
};

class NodeFiles {
 public:
  virtual ~NodeFiles() = default;
  // The node's layout of paths (plan::NodeSettings::side_by_side for a pool).
  virtual bool side_by_side() const = 0;
  // The base image where the node's host opens it, from the server's cached copy at `local`
  // (a pool gets it uploaded once, named by its digest).
  virtual BaseImage place_base(const std::string& local) = 0;
  virtual bool exists(const std::string& path) = 0;
  // Makes the space's place (its directory, where the layout has one).
  virtual void make_space_place(const plan::Plan& plan) = 0;
  // The overlay `path` on `base` of the base's virtual size or `size`, whichever is more; an
  // existing file is never overwritten, a failure leaves nothing.
  virtual void create_overlay(const BaseImage& base, const std::string& path,
                              std::optional<std::uint64_t> size) = 0;
  // Grows the disk to `size` (never shrinks).
  virtual void grow(const std::string& path, std::uint64_t size) = 0;
  // The seed as the plan has it, written only when its bytes differ from what is there.
  virtual void write_seed(const plan::Plan& plan, const std::string& iso) = 0;
  // The space's files readable by no other account of the host (where this can be set).
  virtual void tighten(const plan::Plan& plan) = 0;
  // Removes every file of the space (`domain` on this node); nothing is left.
  virtual void remove_space(const std::string& domain) = 0;
  // Whether a file of the space is left.
  virtual bool any_left(const std::string& domain) = 0;
  // Copies the node's file `path` to `local`, a new file on the server (a move's spool).
  virtual void fetch(const std::string& path, const std::string& local) = 0;
  // Places the server's file `local` as the node's new file `path` (0600); an existing file is
  // never overwritten.
  virtual void put(const std::string& local, const std::string& path) = 0;
  // The last `max_bytes` of the space's console log; empty when there is none.
  virtual std::string console_tail(const std::string& domain, std::size_t max_bytes) = 0;
};

}  // namespace bowline::engine
