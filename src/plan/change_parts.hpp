// What a space is made of, in parts that take effect at different times: a part's fingerprint
// at the last start, compared with the template's and owner's now, tells which changes are
// pending and when each will arrive (space info, GET /spaces/{id}). docs/templates.md has the
// same table for people.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "spec/spec.hpp"

namespace bowline::plan {

// When a change of a part reaches the space.
enum class Applies {
  NextStart,  // the domain is redefined and the seed's every-boot parts run again
  NewSpaces   // only spaces made from now on (a running disk is never rebuilt)
};
const char* to_string(Applies applies);  // "at the next start" | "to new spaces only"

struct PartRule {
  const char* name;  // "size", "environment", ...
  Applies applies;
  const char* what;  // for people: "memory, vCPUs and CPU model"
};
// Every part, in the order they are shown.
const std::vector<PartRule>& part_rules();

// part name -> fingerprint (16 hex digits) of what the spec and plan say for it now.
std::map<std::string, std::string> change_parts(const spec::Spec& spec, const Plan& plan);

struct PendingChange {
  std::string part;
  Applies applies = Applies::NextStart;
  std::string what;
};
// The parts whose fingerprint differs from the applied one (a part the applied set lacks, as
// from an older server, is not reported).
std::vector<PendingChange> pending_changes(const std::map<std::string, std::string>& applied,
                                           const std::map<std::string, std::string>& now);

}  // namespace bowline::plan
