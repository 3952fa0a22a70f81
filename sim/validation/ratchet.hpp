#pragma once
// Ratchet files: the error each subset of a comparison may not exceed (tests/validation).
#include <map>
#include <string>

namespace trainsim::validation {

// Lines "SUBSET MAPE_PERCENT" (e.g. "all 9.8"); '#' starts a comment. A line of another shape
// is a core::ConfigError at file:line:1.
std::map<std::string, double> read_ratchet(const std::string& path);

// Checks each subset's MAPE (a fraction, by subset name) against the ratchet file at `path`;
// says on standard error each subset that is worse or has no `items` (rows, cases), and
// returns how many.
int ratchet_failures(const std::string& path, const std::map<std::string, double>& mape,
                     const std::string& items);

}  // namespace trainsim::validation
