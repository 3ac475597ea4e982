package My::Suite::Rpl::TidesDB;

# The TidesDB overlay of the stock rpl suite: its tests with TidesDB as the default storage
# engine on every server of a test, primary and replicas alike (suite.opt is given to all of
# them; a test whose own .opt or .cnf names another engine keeps it). The server warns at
# every start that the plugin's maturity (gamma) is below its own; mtr's check of the error
# log would report that for every test that restarts a server.

@ISA = qw(My::Suite);

push @::global_suppressions,
  qr/Plugin 'TidesDB' is of maturity level gamma while the server is stable/;

# TidesDB refuses statement-based logging of its changes (ER_BINLOG_STMT_MODE_AND_ROW_ENGINE,
# as MyRocks; docs/SQL-ENGINE.md "Replication"). The rpl suite has no combinations file of
# its own: a test gets its row / stmt / mix combinations from the include files it sources
# (include/rpl_init.inc through master-slave.inc, include/binlog_combinations.inc). Those
# live in mysql-test/include, outside this overlay, and mtr looks their skips up by the
# file's full path, so they are entered here directly: the stmt combination is not run, and
# a test that sources have_binlog_format_statement.inc (STATEMENT only; its .opt would set
# STATEMENT in the remaining combinations) is skipped with the reason.
my $include = "$::glob_mysql_test_dir/include";
$mtr_cases::skip_combinations{"$include/$_.combinations => stmt"} = 1
  for qw(rpl_init binlog_combinations);
$mtr_cases::skip_combinations{"$include/have_binlog_format_statement.combinations"} =
  'STATEMENT binlog format only; TidesDB refuses statement logging of its changes';

bless { };
