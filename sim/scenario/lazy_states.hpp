#pragma once
// training.optimizer_states: lazy (docs/finetuning.md, "Optimizer states created in the first
// step"): the scenarios whose optimizer states trainsim can create in the first step, as
// torch.optim's `_init_group` does, stated once for the scenario validator (which refuses lazy,
// located at training.optimizer_states, where this gives a reason) and for diagnose (whose
// remedies say eager where they leave a scenario lazy is refused for).
#include <optional>
#include <string>

#include "sim/scenario/scenario.hpp"

namespace trainsim::scenario {

// Why lazy states are not modelled for `s` (whatever s.training.lazy_optimizer_states says);
// nullopt when they are. The first reason of: an optimizer other than torch.optim's adam, adamw,
// momentum and lion; fp32 master weights kept with the states; optimizer_in_backward; LoRA;
// ZeRO stage 1 or more.
std::optional<std::string> lazy_states_refusal(const Scenario& s);

}  // namespace trainsim::scenario
