package My::Suite::Parts::TidesDB;

# The TidesDB overlay of the stock parts suite: its tests with TidesDB as the default
# storage engine (suite.opt; a test that names its engine keeps it). The server warns at
# every start that the plugin's maturity (gamma) is below its own; mtr's check of the
# error log would report that for every test that restarts a server.

@ISA = qw(My::Suite);

push @::global_suppressions,
  qr/Plugin 'TidesDB' is of maturity level gamma while the server is stable/;

bless { };
