// The engine's handlerton, shared by everything in the plugin that talks to the server on the
// engine's behalf (transactions, per-connection data). Set while the plugin is initialised,
// null before init and after deinit (the server calls deinit with no handlerton).
#pragma once

// my_global.h comes first in every server translation unit.
#include <my_global.h>

#include <handler.h>

namespace tidesql {

extern handlerton* tidesdb_hton;

}  // namespace tidesql
