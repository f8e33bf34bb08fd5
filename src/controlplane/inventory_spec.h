// A node as the scheduler models it, from the inventory its agent registered:
// the one translation, used by the server's cluster model and by
// `tessera whatif`, which rebuilds that model from GET /v1/cluster/record.
#pragma once

#include "api/agent_protocol.h"
#include "model/cluster.h"

namespace tessera::controlplane {

// The inventory was validated when the agent registered (its sharing modes
// parse); an unknown mode here is left out.
model::NodeSpec NodeSpecOf(const api::NodeInventory& inventory);

}  // namespace tessera::controlplane
