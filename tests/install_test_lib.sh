# Sourced by tests/package/package_test.sh and tests/docker/container_test.sh, which install
# the project as a user would: the line each ends with, and the table both write and read
# back.

# test_start NAME: the clock, and LOGS (TIDESQL_TEST_LOGS, else /tmp/tidesql-NAME-test).
test_start() {
  TEST_NAME=$1
  TEST_STARTED=$(date +%s)
  LOGS=${TIDESQL_TEST_LOGS:-/tmp/tidesql-$1-test}
  mkdir -p "$LOGS"
}
fail() {
  echo "$TEST_NAME test: FAIL: $*"
  exit 1
}
pass() { echo "$TEST_NAME test: PASS ($(($(date +%s) - TEST_STARTED)) s)"; }
step() { echo "--- $*"; }

# SQL that creates database $1 holding a TidesDB table t: 5000 rows written, some updated,
# some deleted, with a secondary index.
fill_table_sql() {
  echo "CREATE DATABASE $1; USE $1;
    CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL, KEY v (v)) ENGINE=TidesDB;
    INSERT INTO t SELECT seq, CONCAT('value ', seq * 7 % 1000) FROM seq_1_to_5000;
    UPDATE t SET v = 'updated' WHERE id % 100 = 0;
    DELETE FROM t WHERE id % 7 = 0;"
}
# SQL printing a digest of every row of $1.t, read through the primary key and through
# the secondary index.
table_digest_sql() {
  echo "SELECT COUNT(*), SUM(id), MD5(GROUP_CONCAT(id, v ORDER BY id)) FROM $1.t;
    SELECT COUNT(*), MD5(GROUP_CONCAT(id ORDER BY v, id)) FROM $1.t FORCE INDEX (v)"
}
# SQL printing the engine of every table of database $1 (TidesDB for each of the above).
table_engine_sql() { echo "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$1'"; }
