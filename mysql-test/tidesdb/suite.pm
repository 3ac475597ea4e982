package My::Suite::TidesDB;

# The engine's own suite. suite.opt loads and forces ha_tidesdb.so from the plugin directory
# that scripts/test.sh prepares ($HA_TIDESDB_SO).

@ISA = qw(My::Suite);

# The plugin declares GAMMA maturity (the server is started with
# --plugin-maturity=gamma), and the server notes that at every start.
push @::global_suppressions,
  qr/Plugin 'TidesDB' is of maturity level gamma while the server is stable/;

bless { };
