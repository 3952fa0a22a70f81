// The switch between the event loop's compact op records and the ops themselves (event_ops.hpp).

#include "sim/exec/event_ops.hpp"

namespace trainsim::exec {

namespace {
thread_local bool read_records = true;
}  // namespace

bool read_event_ops() {
  return read_records;
}

ReadEventOps::ReadEventOps(bool on) : before_(read_records) {
  read_records = on;
}

ReadEventOps::~ReadEventOps() {
  read_records = before_;
}

}  // namespace trainsim::exec
