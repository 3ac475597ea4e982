package My::Suite::StorageEngine::TidesDB;

# The TidesDB overlay of the stock storage_engine suite (and, through parts/suite.pm and
# trx/suite.pm, of its subsuites). suite.opt loads ha_tidesdb.so, which declares GAMMA
# maturity; the server warns about that at every start. mtr's check of the error log after
# a server shutdown would report that warning for every test that restarts a server, so it
# is suppressed here as the project's own suite does.

@ISA = qw(My::Suite);

push @::global_suppressions,
  qr/Plugin 'TidesDB' is of maturity level gamma while the server is stable/;

bless { };
