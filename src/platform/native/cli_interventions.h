#pragma once
// The `gpt2` tool's intervention flags, read into the engine's list in the order given (they compose
// in it, as the web module's `interventions` option does; docs/api.md defines each):
//   --ablate-head L.H            head H of block L
//   --ablate-neurons L:I,J,...   those MLP hidden units of block L
//   --steer L:FILE:SCALE         SCALE times FILE's vector added after block L
//   --patch L:POS:FILE           the residual stream after block L at POS replaced by FILE's vector
// FILE holds a JSON array of n_embd numbers (a row of `gpt2 hidden`'s output, say).
#include <string>
#include <vector>

#include "model/interventions.h"
#include "platform/native/cli_args.h"

namespace gpt2 {

// The flags above, as `gpt2 help` lists them.
const std::vector<std::string>& interventionFlags();
extern const char* const kInterventionHelp;

std::vector<Intervention> interventionsFromFlags(const CliArgs& args);

}  // namespace gpt2
