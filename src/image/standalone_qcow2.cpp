#include "image/standalone_qcow2.hpp"

#include "image/errors.hpp"
#include "image/qcow2.hpp"
#include "spec/quantity.hpp"

namespace bowline::image {

namespace {

constexpr std::uint64_t kMaxL1Bytes = 32u << 20;  // QEMU's own limit on the L1 table

}  // namespace

std::string standalone_qcow2_problem(const std::filesystem::path& file,
                                     const StandaloneLimits& limits) {
  std::optional<Qcow2Header> header;
  try {
    header = read_qcow2_header(file);
  } catch (const DiskError&) {
    return "it is not a readable qcow2 image (its header is damaged)";
  }
  if (!header) return "it is not a qcow2 image";
  if (header->backing_file) return "it has a backing file: only standalone disks are taken";
  if (header->external_data_file)
    return "it keeps its data in an external file: only standalone disks are taken";
  if (header->crypt_method != 0) return "it is encrypted, which bowline does not take";
  if (std::uint64_t{header->l1_size} * 8 > kMaxL1Bytes)
    return "its L1 table is larger than QEMU allows";
  if (header->virtual_size > limits.max_virtual_size)
    return "its virtual size " + spec::format_binary_size(header->virtual_size) +
           " is more than the " + spec::format_binary_size(limits.max_virtual_size) + " allowed";
  return {};
}

}  // namespace bowline::image
