package My::Suite::Binlog::TidesDB;

# The TidesDB overlay of the stock binlog suite: its tests with TidesDB as the default
# storage engine (suite.opt; a test whose own .opt names another engine keeps it). The
# server warns at every start that the plugin's maturity (gamma) is below its own; mtr's
# check of the error log would report that for every test that restarts a server.

@ISA = qw(My::Suite);

push @::global_suppressions,
  qr/Plugin 'TidesDB' is of maturity level gamma while the server is stable/;

# TidesDB refuses statement-based logging of its changes (ER_BINLOG_STMT_MODE_AND_ROW_ENGINE,
# as MyRocks; docs/SQL-ENGINE.md "Replication"), so the suite runs in its row and mixed
# combinations only.
sub skip_combinations {
  my %skip = ('combinations' => ['stmt']);
  return %skip;
}

bless { };
