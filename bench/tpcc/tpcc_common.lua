-- TPC-C-like workload for sysbench 1.0.20: options, schema, loader, the random input
-- generators of the specification (NURand, last names, a-strings) and the per-thread
-- statistics. tpcc.lua (the script sysbench runs) holds the five transactions.
--
-- Written from the TPC-C specification's description (revision 5.11, clauses 1-4):
-- schema and primary keys of clause 1.3, initial population of clause 4.3.3.1, input
-- generation of clauses 2.1.6 and 4.3.2. Not a TPC-C result: no keying or think times,
-- no terminals, one transaction after the other on each sysbench thread.
--
-- The scale: --warehouses W gives, per warehouse, 10 districts x 3000 customers, 3000
-- orders per district (5-15 lines each, the last 900 undelivered in new_orders) and
-- 100,000 stock rows; item holds 100,000 rows. --scale S < 1 (NOT STANDARD, for smoke
-- runs) multiplies customers, orders, undelivered orders, items and stock by S.

local ffi = require("ffi")
local bit = require("bit")

pcall(ffi.cdef, [[
typedef struct { long tv_sec; long tv_nsec; } tpcc_timespec_t;
int clock_gettime(int clk_id, tpcc_timespec_t *tp);
int getpid(void);
]])

local M = {}

-- Defaults are strings with the type given: sysbench 1.0.20 keeps a pointer to the
-- tostring() of a number default without keeping the string, and a garbage collection
-- before the options are parsed turns the default into garbage (max_retries read 0).
local INT, DOUBLE = sysbench.cmdline.ARG_INT, sysbench.cmdline.ARG_DOUBLE
sysbench.cmdline.options = {
  mysql_storage_engine = {"Storage engine (ENGINE=) of every table", "InnoDB"},
  warehouses = {"Number of warehouses", "1", INT},
  scale = {"Fraction of the standard customers, orders, items and stock (1 = standard; < 1 is NOT standard)", "1",
           DOUBLE},
  home = {"Home warehouse of a transaction: 'thread' (thread id modulo warehouses) or 'random'", "thread"},
  max_retries = {"Attempts after a deadlock or conflict before the transaction counts as an error", "20", INT},
  stats_dir = {"Directory for the per-thread statistics merged at the end (default: TMPDIR)", ""},
  load_batch = {"Rows per INSERT statement while loading", "200", INT},
  load_commit = {"Rows per transaction while loading", "2000", INT},
}

-- Retried, not failed: deadlock (1213), lock wait timeout (1205), record changed since last
-- read (1020), and an error at commit (1180) in case an engine reports its conflict so.
-- TidesDB's optimistic conflicts at commit and its lock waits map to 1213 and 1205
-- (plugin/engine.cc ha_error_from_status, plugin/trx.cc report_completion_error).
M.RETRYABLE = {[1213] = true, [1205] = true, [1020] = true, [1180] = true}

-- Every SQL error becomes a catchable table ({sql_errno, sql_errmsg, ...}); the workload
-- decides what to retry (tpcc.lua) and the loader makes every error fatal (M.must).
sysbench.hooks.sql_error_ignorable = function() return true end

-- The sizes, from the options.
function M.sizes()
  local o = sysbench.opt
  local scale = tonumber(o.scale)
  local s = {}
  s.warehouses = tonumber(o.warehouses)
  s.districts = 10
  s.customers = math.max(30, math.floor(3000 * scale + 0.5)) -- per district
  s.orders = s.customers -- per district: one initial order per customer
  s.undelivered = math.floor(s.orders * 900 / 3000 + 0.5) -- the last ones, in new_orders
  s.items = math.max(100, math.floor(100000 * scale + 0.5)) -- also stock rows per warehouse
  s.standard = scale == 1
  return s
end

-- Time in seconds (monotonic), as a Lua number.
local ts = ffi.new("tpcc_timespec_t")
function M.now()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

function M.stats_path(tid)
  local dir = sysbench.opt.stats_dir
  if dir == nil or dir == "" then dir = os.getenv("TMPDIR") or "/tmp" end
  return string.format("%s/sysbench-tpcc-%d-%d.stats", dir, ffi.C.getpid(), tid)
end

-- Random numbers (clause 2.1.6 and 4.3.2).
local uniform = sysbench.rand.uniform
M.uniform = uniform

-- NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x. The C constants
-- are fixed: C_LAST differs between load and run by 86 (clause 2.1.6.1: in 65..119, not
-- 96 or 112).
M.C_LAST_LOAD = 157
M.C_LAST_RUN = 243
M.C_ID = 259
M.C_OL_I_ID = 7911
function M.nurand(a, x, y, c)
  return ((bit.bor(uniform(0, a), uniform(x, y)) + c) % (y - x + 1)) + x
end

local SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}
-- The last name of number n in 0..999: its three digits as syllables (clause 4.3.2.3).
function M.last_name(n)
  return SYLLABLES[math.floor(n / 100) + 1] .. SYLLABLES[math.floor(n / 10) % 10 + 1] .. SYLLABLES[n % 10 + 1]
end

-- A random last name for the run: NURand(255, 0, 999), bounded by the names loaded
-- (a scaled-down district has fewer than 1000 customers, so fewer names).
function M.run_last_name(sizes)
  local top = math.min(999, sizes.customers - 1)
  return M.last_name(M.nurand(255, 0, top, M.C_LAST_RUN))
end

-- a-strings and n-strings: substrings of a per-state pool of random characters, which
-- keeps loading cheap.
local ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
local pool, npool
local function fill_pool()
  local chars = {}
  for i = 1, 8192 do
    local k = uniform(1, #ALNUM)
    chars[i] = ALNUM:sub(k, k)
  end
  pool = table.concat(chars)
  npool = {}
  for i = 1, 1024 do npool[i] = tostring(uniform(0, 9)) end
  npool = table.concat(npool)
end

function M.astring(min, max)
  if pool == nil then fill_pool() end
  local len = uniform(min, max)
  local off = uniform(1, #pool - len + 1)
  return pool:sub(off, off + len - 1)
end

function M.nstring(len)
  if pool == nil then fill_pool() end
  local off = uniform(1, #npool - len + 1)
  return npool:sub(off, off + len - 1)
end

-- i_data / s_data: 26..50 characters, 10% with "ORIGINAL" at a random position.
local function data_with_original()
  local s = M.astring(26, 50)
  if uniform(1, 10) == 1 then
    local at = uniform(1, #s - 7)
    s = s:sub(1, at - 1) .. "ORIGINAL" .. s:sub(at + 8)
  end
  return s
end

local function state() return M.astring(2, 2):upper() end
local function zip() return M.nstring(4) .. "11111" end
local function money(lo_cents, hi_cents) return string.format("%.2f", uniform(lo_cents, hi_cents) / 100) end
local function tax() return string.format("%.4f", uniform(0, 2000) / 10000) end

-- Schema (clause 1.3), primary keys as in the specification; the two secondary indexes
-- the transactions need. history has no primary key.
function M.create_tables(con, engine)
  local e = " ENGINE=" .. engine
  local ddl = {
    [[CREATE TABLE IF NOT EXISTS warehouse (
  w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id))]],
    [[CREATE TABLE IF NOT EXISTS district (
  d_id TINYINT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4),
  d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id))]],
    [[CREATE TABLE IF NOT EXISTS customer (
  c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16),
  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20),
  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME,
  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
  c_ytd_payment DECIMAL(12,2), c_payment_cnt SMALLINT, c_delivery_cnt SMALLINT, c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id),
  KEY idx_customer (c_w_id, c_d_id, c_last, c_first))]],
    [[CREATE TABLE IF NOT EXISTS history (
  h_c_id INT, h_c_d_id TINYINT, h_c_w_id INT, h_d_id TINYINT, h_w_id INT, h_date DATETIME,
  h_amount DECIMAL(6,2), h_data VARCHAR(24))]],
    [[CREATE TABLE IF NOT EXISTS new_orders (
  no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id INT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id))]],
    [[CREATE TABLE IF NOT EXISTS orders (
  o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d DATETIME,
  o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id),
  KEY idx_orders (o_w_id, o_d_id, o_c_id, o_id))]],
    [[CREATE TABLE IF NOT EXISTS order_line (
  ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id INT NOT NULL, ol_number TINYINT NOT NULL,
  ol_i_id INT, ol_supply_w_id INT, ol_delivery_d DATETIME, ol_quantity TINYINT,
  ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))]],
    [[CREATE TABLE IF NOT EXISTS item (
  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50),
  PRIMARY KEY (i_id))]],
    [[CREATE TABLE IF NOT EXISTS stock (
  s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity SMALLINT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24),
  s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24),
  s_ytd DECIMAL(8,0), s_order_cnt SMALLINT, s_remote_cnt SMALLINT, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id))]],
  }
  for _, sql in ipairs(ddl) do M.must(con, sql .. e) end
end

M.TABLES = {"warehouse", "district", "customer", "history", "new_orders", "orders", "order_line", "item", "stock"}

-- A query whose every error is fatal, with the statement in the message.
function M.must(con, sql)
  local ok, res = pcall(con.query, con, sql)
  if ok then return res end
  if type(res) == "table" then
    error(string.format("SQL error %d (%s) in: %s", res.sql_errno, res.sql_errmsg, sql:sub(1, 300)), 0)
  end
  error(res, 0)
end

-- Multi-row INSERTs of load_batch rows. The loading connection runs with autocommit off
-- (M.begin_load) and commits every load_commit rows, whichever table they went to.
local Loader = {}
Loader.__index = Loader
local uncommitted = 0

function M.begin_load(con)
  M.must(con, "SET autocommit = 0")
  uncommitted = 0
end

function M.end_load(con)
  M.must(con, "COMMIT")
  M.must(con, "SET autocommit = 1")
end

local function new_loader(con, head)
  return setmetatable({con = con, head = head, rows = {}, batch = tonumber(sysbench.opt.load_batch)}, Loader)
end

function Loader:add(row)
  local rows = self.rows
  rows[#rows + 1] = row
  if #rows >= self.batch then self:flush() end
end

function Loader:flush()
  if #self.rows == 0 then return end
  M.must(self.con, self.head .. "(" .. table.concat(self.rows, "),(") .. ")")
  uncommitted = uncommitted + #self.rows
  self.rows = {}
  if uncommitted >= tonumber(sysbench.opt.load_commit) then
    M.must(self.con, "COMMIT")
    uncommitted = 0
  end
end

Loader.finish = Loader.flush

local function q(s) return "'" .. s .. "'" end

function M.load_items(con, sizes, first, last)
  local l = new_loader(con, "INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data) VALUES ")
  for i = first, last do
    l:add(string.format("%d,%d,'%s',%s,'%s'", i, uniform(1, 10000), M.astring(14, 24), money(100, 10000),
                        data_with_original()))
  end
  l:finish()
end

-- One warehouse with its stock, districts, customers, history and orders.
function M.load_warehouse(con, sizes, w)
  local now = q(os.date("%Y-%m-%d %H:%M:%S"))
  M.must(con, string.format("INSERT INTO warehouse VALUES (%d,'%s','%s','%s','%s','%s','%s',%s,300000.00)", w,
                            M.astring(6, 10), M.astring(10, 20), M.astring(10, 20), M.astring(10, 20), state(),
                            zip(), tax()))

  local l = new_loader(con, "INSERT INTO stock VALUES ")
  for i = 1, sizes.items do
    local dist = {}
    for k = 1, 10 do dist[k] = M.astring(24, 24) end
    l:add(string.format("%d,%d,%d,'%s',0,0,0,'%s'", i, w, uniform(10, 100), table.concat(dist, "','"),
                        data_with_original()))
  end
  l:finish()

  for d = 1, sizes.districts do
    M.must(con, string.format("INSERT INTO district VALUES (%d,%d,'%s','%s','%s','%s','%s','%s',%s,30000.00,%d)", d,
                              w, M.astring(6, 10), M.astring(10, 20), M.astring(10, 20), M.astring(10, 20), state(),
                              zip(), tax(), sizes.orders + 1))
    local lc = new_loader(con, "INSERT INTO customer VALUES ")
    local lh = new_loader(con, "INSERT INTO history VALUES ")
    for c = 1, sizes.customers do
      local last
      if c <= 1000 then
        last = M.last_name(c - 1)
      else
        last = M.last_name(M.nurand(255, 0, 999, M.C_LAST_LOAD))
      end
      local credit = uniform(1, 10) == 1 and "BC" or "GC"
      lc:add(string.format(
        "%d,%d,%d,'%s','OE','%s','%s','%s','%s','%s','%s','%s',%s,'%s',50000.00,%s,-10.00,10.00,1,0,'%s'", c, d,
        w, M.astring(8, 16), last, M.astring(10, 20), M.astring(10, 20), M.astring(10, 20), state(), zip(),
        M.nstring(16), now, credit, string.format("%.4f", uniform(0, 5000) / 10000), M.astring(300, 500)))
      lh:add(string.format("%d,%d,%d,%d,%d,%s,10.00,'%s'", c, d, w, d, w, now, M.astring(12, 24)))
    end
    lc:finish()
    lh:finish()

    -- Orders: o_c_id a random permutation of the customers; the last `undelivered` ones
    -- have no carrier, undelivered lines, and a new_orders row.
    local perm = {}
    for c = 1, sizes.orders do perm[c] = c end
    for i = sizes.orders, 2, -1 do
      local j = uniform(1, i)
      perm[i], perm[j] = perm[j], perm[i]
    end
    local first_new = sizes.orders - sizes.undelivered + 1
    local lo = new_loader(con, "INSERT INTO orders VALUES ")
    local ll = new_loader(con, "INSERT INTO order_line VALUES ")
    local ln = new_loader(con, "INSERT INTO new_orders VALUES ")
    for o = 1, sizes.orders do
      local delivered = o < first_new
      local ol_cnt = uniform(5, 15)
      lo:add(string.format("%d,%d,%d,%d,%s,%s,%d,1", o, d, w, perm[o], now,
                           delivered and tostring(uniform(1, 10)) or "NULL", ol_cnt))
      for n = 1, ol_cnt do
        ll:add(string.format("%d,%d,%d,%d,%d,%d,%s,5,%s,'%s'", o, d, w, n, uniform(1, sizes.items), w,
                             delivered and now or "NULL", delivered and "0.00" or money(1, 999999),
                             M.astring(24, 24)))
      end
      if not delivered then ln:add(string.format("%d,%d,%d", o, d, w)) end
    end
    lo:finish()
    ll:finish()
    ln:finish()
  end
end

-- Per-thread statistics: per transaction type, committed and intentionally rolled back
-- transactions, and a latency histogram (logarithmic buckets, 2% wide, from 10 us).
M.TYPES = {"new_order", "payment", "order_status", "delivery", "stock_level"}
local BUCKET_BASE = 1e-5
local BUCKET_RATIO = math.log(1.02)

function M.new_stats()
  local s = {retries = 0, errors = 0, started = nil, finished = nil, types = {}}
  for _, t in ipairs(M.TYPES) do s.types[t] = {commits = 0, rollbacks = 0, hist = {}} end
  return s
end

function M.bucket_of(seconds)
  if seconds <= BUCKET_BASE then return 0 end
  return math.floor(math.log(seconds / BUCKET_BASE) / BUCKET_RATIO) + 1
end

-- The upper bound of a bucket, in milliseconds.
function M.bucket_ms(b)
  if b == 0 then return BUCKET_BASE * 1000 end
  return BUCKET_BASE * math.exp(b * BUCKET_RATIO) * 1000
end

function M.record(stats, kind, outcome, seconds)
  local t = stats.types[kind]
  if outcome == "rollback" then t.rollbacks = t.rollbacks + 1 else t.commits = t.commits + 1 end
  local b = M.bucket_of(seconds)
  t.hist[b] = (t.hist[b] or 0) + 1
end

-- The file format, one record a line:
--   span STARTED FINISHED        (monotonic seconds)
--   counts RETRIES ERRORS
--   type NAME COMMITS ROLLBACKS
--   hist NAME BUCKET COUNT
function M.write_stats(stats, path)
  local f = assert(io.open(path, "w"))
  f:write(string.format("span %.6f %.6f\n", stats.started or 0, stats.finished or 0))
  f:write(string.format("counts %d %d\n", stats.retries, stats.errors))
  for _, name in ipairs(M.TYPES) do
    local t = stats.types[name]
    f:write(string.format("type %s %d %d\n", name, t.commits, t.rollbacks))
    for b, n in pairs(t.hist) do f:write(string.format("hist %s %d %d\n", name, b, n)) end
  end
  f:close()
end

function M.merge_stats(into, path)
  local f = io.open(path, "r")
  if f == nil then return false end
  for line in f:lines() do
    local w = {}
    for x in line:gmatch("%S+") do w[#w + 1] = x end
    if w[1] == "span" then
      local a, b = tonumber(w[2]), tonumber(w[3])
      if a > 0 and (into.started == nil or a < into.started) then into.started = a end
      if b > 0 and (into.finished == nil or b > into.finished) then into.finished = b end
    elseif w[1] == "counts" then
      into.retries = into.retries + tonumber(w[2])
      into.errors = into.errors + tonumber(w[3])
    elseif w[1] == "type" then
      local t = into.types[w[2]]
      t.commits = t.commits + tonumber(w[3])
      t.rollbacks = t.rollbacks + tonumber(w[4])
    elseif w[1] == "hist" then
      local h = into.types[w[2]].hist
      local b = tonumber(w[3])
      h[b] = (h[b] or 0) + tonumber(w[4])
    end
  end
  f:close()
  os.remove(path)
  return true
end

-- The latency (ms, bucket upper bound) below which fraction p of the transactions fall.
function M.percentile_ms(hist, p)
  local total, buckets = 0, {}
  for b, n in pairs(hist) do
    total = total + n
    buckets[#buckets + 1] = b
  end
  if total == 0 then return 0 end
  table.sort(buckets)
  local need, seen = math.ceil(total * p), 0
  for _, b in ipairs(buckets) do
    seen = seen + hist[b]
    if seen >= need then return M.bucket_ms(b) end
  end
  return M.bucket_ms(buckets[#buckets])
end

return M
