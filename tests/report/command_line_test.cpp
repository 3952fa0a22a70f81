#include <catch2/catch.hpp>

#include "sim/report/command_line.hpp"

using trainsim::report::run_command;
using trainsim::report::shell_quote;

TEST_CASE("plain words pass unquoted, others are single-quoted for a POSIX shell", "[report][command]") {
  CHECK(shell_quote("training.micro_batch=4") == "training.micro_batch=4");
  CHECK(shell_quote("scenarios/single_gpu/02_activation_oom.yaml") ==
        "scenarios/single_gpu/02_activation_oom.yaml");
  CHECK(shell_quote("device.memory=79.15GiB") == "device.memory=79.15GiB");
  // Spaces, brackets, globs, $ and quotes would be split or expanded by the shell.
  CHECK(shell_quote("name=a b") == "'name=a b'");
  CHECK(shell_quote("parallel.stages=[0, 1]") == "'parallel.stages=[0, 1]'");
  CHECK(shell_quote("x=$HOME*") == "'x=$HOME*'");
  // A single quote closes the quoting, is escaped, and reopens it: it's -> 'it'\''s'.
  CHECK(shell_quote("name=it's") == "'name=it'\\''s'");
  CHECK(shell_quote("") == "''");
}

TEST_CASE("a run command has one --set per override", "[report][command]") {
  CHECK(run_command("s.yaml", {}) == "trainsim run s.yaml");
  CHECK(run_command("my runs/s.yaml", {"training.micro_batch=1", "training.grad_accum=8"}) ==
        "trainsim run 'my runs/s.yaml' --set training.micro_batch=1 --set training.grad_accum=8");
}
