// Serves the web dashboard from the API port: "/" and "/ui" lead to "/ui/",
// the single-page app whose views read the same /v1 API as the CLI.
#pragma once

#include "net/router.h"

namespace tessera::dashboard {

void AddDashboardRoutes(net::Router& router);

}  // namespace tessera::dashboard
