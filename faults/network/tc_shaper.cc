// Stub: the libnl traffic-control shaper is being written on its own branch.
#include "faults/network/tc_shaper.h"

#include <stdexcept>

namespace chaosbench::faults {

struct TcShaper::Impl {
  std::string interface;
};

TcShaper::TcShaper(int, std::string interface) : impl_(std::make_unique<Impl>()) { impl_->interface = std::move(interface); }
TcShaper::~TcShaper() = default;
int TcShaper::add(const ShapeRule&) { throw std::runtime_error("the tc shaper is not built yet"); }
void TcShaper::remove(int) {}
const std::string& TcShaper::interface() const { return impl_->interface; }
std::string TcShaper::root_handle() const { return ""; }
bool TcShaper::netem_available(std::string* why) {
  if (why) *why = "the tc shaper is not built yet";
  return false;
}

}  // namespace chaosbench::faults
