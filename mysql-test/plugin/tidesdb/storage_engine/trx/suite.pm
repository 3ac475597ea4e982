# Same as ../suite.pm: suppress the server's warning about the plugin's GAMMA maturity.
do "$::glob_mysql_test_dir/plugin/tidesdb/storage_engine/suite.pm";
