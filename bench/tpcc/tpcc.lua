#!/usr/bin/env sysbench
-- TPC-C-like workload for sysbench 1.0.20 (MySQL driver): the five transactions of the
-- TPC-C specification (clauses 2.4-2.8) in the standard mix, on the schema that
-- tpcc_common.lua creates and loads.
--
-- Usage (the database must exist; --mysql-storage-engine names the ENGINE of every table):
--   sysbench bench/tpcc/tpcc.lua --mysql-db=tpcc_InnoDB --mysql-storage-engine=InnoDB \
--     --warehouses=4 --threads=4 prepare        (parallel: items split, warehouses dealt out)
--   sysbench bench/tpcc/tpcc.lua ... --time=60 run
--   sysbench bench/tpcc/tpcc.lua ... check      (consistency conditions 1-4 of clause 3.3.2)
--   sysbench bench/tpcc/tpcc.lua ... cleanup
-- Options: --warehouses [1], --scale [1] (< 1: NOT STANDARD, fewer customers, orders,
--   items and stock), --home [thread] (home warehouse = thread id modulo warehouses) or
--   random, --max-retries [20], --stats-dir [TMPDIR], --load-batch [200],
--   --load-commit [2000].
--
-- The mix, per transaction drawn: new-order 45%, payment 43%, order-status 4%, delivery 4%,
-- stock-level 4%. Inputs as in the specification: NURand(1023) customer ids, NURand(8191)
-- item ids, NURand(255) last names; 60% of payment and order-status select the customer by
-- last name; 1% of new-orders end on an unused item id and roll back; 1% of order lines
-- come from a remote warehouse, 15% of payments are for a remote customer (with more than
-- one warehouse). Rows the specification reads for update are read with FOR UPDATE.
-- Delivery handles its 10 districts in one transaction. Isolation: the server's default.
--
-- A deadlock or conflict (1213, 1205, 1020, 1180) rolls the transaction back and runs it
-- again with the same inputs after a random pause (up to 2 ms, doubling per attempt, at most
-- 50 ms), counted as a retry; its latency runs from the first attempt to the final commit. Any other error rolls back and counts as an error (the first five
-- are printed on stderr).
--
-- Output at the end of run, after sysbench's own report, one parseable line:
--   tpcc: seconds=S transactions=N new_orders=N nopm=X p99_new_order_ms=X
--     p99_payment_ms=X p99_order_status_ms=X p99_delivery_ms=X p99_stock_level_ms=X
--     errors=N retries=N rollbacks=N
-- (transactions counts every completed transaction, intended rollbacks included;
-- new_orders and NOPM count committed new-orders only; seconds runs from the first
-- thread's first transaction to the last thread's end; percentiles are the upper bound of
-- a 2%-wide histogram bucket, merged over the threads) and one line per type:
--   tpcc-type: NAME commits=N rollbacks=N p50_ms=X p95_ms=X p99_ms=X

local dir = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
package.path = dir .. "/?.lua;" .. package.path
local T = require("tpcc_common")
local ffi = require("ffi")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

local uniform, nurand = T.uniform, T.nurand

local function engine() return sysbench.opt.mysql_storage_engine end

-- prepare: thread 0 creates the tables, the others wait for the last one (stock); then each thread loads
-- its share of item and the warehouses w with (w - 1) % threads == its id.
local function cmd_prepare()
  local con = sysbench.sql.driver():connect()
  local sizes = T.sizes()
  local tid, threads = sysbench.tid, sysbench.opt.threads
  if tid == 0 then
    if not sizes.standard then
      print(string.format("tpcc: scale %s is NOT STANDARD (%d customers and orders per district, %d items)",
                          tostring(sysbench.opt.scale), sizes.customers, sizes.items))
    end
    T.create_tables(con, engine()) -- stock last
  else
    repeat
      ffi.C.usleep(200000)
      local rs = T.must(con, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() " ..
                               "AND TABLE_NAME = 'stock'")
    until tonumber(rs:fetch_row()[1]) == 1
  end
  T.begin_load(con)
  local first = math.floor(sizes.items * tid / threads) + 1
  local last = math.floor(sizes.items * (tid + 1) / threads)
  if last >= first then T.load_items(con, sizes, first, last) end
  for w = tid + 1, sizes.warehouses, threads do
    print(string.format("tpcc: thread %d loading warehouse %d", tid, w))
    T.load_warehouse(con, sizes, w)
  end
  T.end_load(con)
  con:disconnect()
end

local function cmd_cleanup()
  local con = sysbench.sql.driver():connect()
  for _, t in ipairs(T.TABLES) do T.must(con, "DROP TABLE IF EXISTS " .. t) end
  con:disconnect()
end

-- check: consistency conditions 1-4 of clause 3.3.2, each as the number of warehouses or
-- districts violating it; prints "tpcc-check: PASS" or "tpcc-check: FAIL (...)".
local CHECKS = {
  {"1 w_ytd = sum(d_ytd)", [[
SELECT COUNT(*) FROM warehouse w
  LEFT JOIN (SELECT d_w_id, SUM(d_ytd) s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
 WHERE d.s IS NULL OR w.w_ytd <> d.s]]},
  {"2 d_next_o_id - 1 = max(o_id) = max(no_o_id)", [[
SELECT COUNT(*) FROM district d
  LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders GROUP BY o_w_id, o_d_id) o
    ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
  LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) m FROM new_orders GROUP BY no_w_id, no_d_id) n
    ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
 WHERE o.m IS NULL OR d.d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND n.m <> o.m)]]},
  {"3 max(no_o_id) - min(no_o_id) + 1 = count(new_orders)", [[
SELECT COUNT(*) FROM (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 span, COUNT(*) n FROM new_orders
                       GROUP BY no_w_id, no_d_id) x
 WHERE x.span <> x.n]]},
  {"4 sum(o_ol_cnt) = count(order_line)", [[
SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) s FROM orders GROUP BY o_w_id, o_d_id) o
  LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) n FROM order_line GROUP BY ol_w_id, ol_d_id) l
    ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
 WHERE l.n IS NULL OR o.s <> l.n]]},
}

local function cmd_check()
  local con = sysbench.sql.driver():connect()
  local failed = {}
  for _, c in ipairs(CHECKS) do
    local n = tonumber(T.must(con, c[2]):fetch_row()[1])
    print(string.format("tpcc-check: condition %s: %d violations", c[1], n))
    if n ~= 0 then failed[#failed + 1] = string.format("condition %s: %d", c[1]:sub(1, 1), n) end
  end
  local districts = tonumber(T.must(con, "SELECT COUNT(*) FROM district"):fetch_row()[1])
  if districts ~= T.sizes().warehouses * 10 then
    failed[#failed + 1] = string.format("%d districts", districts)
  end
  if #failed == 0 then
    print("tpcc-check: PASS")
  else
    print("tpcc-check: FAIL (" .. table.concat(failed, "; ") .. ")")
  end
  con:disconnect()
end

sysbench.cmdline.commands = {
  prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
  cleanup = {cmd_cleanup},
  check = {cmd_check},
}

-- The run.
local con, sizes, stats, thread_id, max_retries

function thread_init(tid)
  con = sysbench.sql.driver():connect()
  sizes = T.sizes()
  stats = T.new_stats()
  thread_id = tid
  max_retries = tonumber(sysbench.opt.max_retries)
end

local function query(sql) return con:query(sql) end

-- The first row (a table of strings, nil for NULL) or nil.
local function row(sql)
  local rs = con:query(sql)
  if rs == nil or rs.nrows == 0 then return nil end
  return rs:fetch_row()
end

local function home_warehouse()
  if sysbench.opt.home == "random" then return uniform(1, sizes.warehouses) end
  return thread_id % sizes.warehouses + 1
end

local function other_warehouse(w)
  local x = uniform(1, sizes.warehouses - 1)
  if x >= w then x = x + 1 end
  return x
end

-- The customer of a payment or order-status chosen by last name: the one at position
-- ceil(n / 2) of those with that name, ordered by c_first (clause 2.5.2.2).
local function customer_by_name(w, d, last)
  local rs = query(string.format(
    "SELECT c_id FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' ORDER BY c_first", w, d, last))
  local n = rs and tonumber(rs.nrows) or 0
  if n == 0 then error("no customer named " .. last, 0) end
  local pick, r = math.ceil(n / 2), nil
  for _ = 1, pick do r = rs:fetch_row() end
  return tonumber(r[1])
end

-- Each builder draws the inputs and returns the body, run (again, after a conflict) by
-- run_transaction; a body returns "commit" or "rollback".
local function new_order(w)
  local d = uniform(1, 10)
  local c = nurand(1023, 1, sizes.customers, T.C_ID)
  local ol_cnt = uniform(5, 15)
  local unused_item = uniform(1, 100) == 1
  local lines, all_local = {}, 1
  for n = 1, ol_cnt do
    local l = {item = nurand(8191, 1, sizes.items, T.C_OL_I_ID), supply = w, qty = uniform(1, 10)}
    if n == ol_cnt and unused_item then l.item = sizes.items + 1 end
    if sizes.warehouses > 1 and uniform(1, 100) == 1 then
      l.supply = other_warehouse(w)
      all_local = 0
    end
    lines[n] = l
  end
  return function()
    query("BEGIN")
    local w_tax = tonumber(row("SELECT w_tax FROM warehouse WHERE w_id = " .. w)[1])
    local dr = row(string.format(
      "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d FOR UPDATE", w, d))
    local d_tax, o_id = tonumber(dr[1]), tonumber(dr[2])
    query(string.format("UPDATE district SET d_next_o_id = %d WHERE d_w_id = %d AND d_id = %d", o_id + 1, w, d))
    local cr = row(string.format(
      "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
    local discount = tonumber(cr[1])
    query(string.format("INSERT INTO orders VALUES (%d, %d, %d, %d, NOW(), NULL, %d, %d)", o_id, d, w, c, ol_cnt,
                        all_local))
    query(string.format("INSERT INTO new_orders VALUES (%d, %d, %d)", o_id, d, w))
    local total = 0
    for n, l in ipairs(lines) do
      local ir = row("SELECT i_price, i_name, i_data FROM item WHERE i_id = " .. l.item)
      if ir == nil then
        query("ROLLBACK") -- the unused item id: the intended 1% rollback
        return "rollback"
      end
      local sr = row(string.format(
        "SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_i_id = %d AND s_w_id = %d FOR UPDATE", d,
        l.item, l.supply))
      local qty = tonumber(sr[1])
      if qty >= l.qty + 10 then qty = qty - l.qty else qty = qty - l.qty + 91 end
      query(string.format("UPDATE stock SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1, " ..
                            "s_remote_cnt = s_remote_cnt + %d WHERE s_i_id = %d AND s_w_id = %d", qty, l.qty,
                          l.supply == w and 0 or 1, l.item, l.supply))
      local amount = l.qty * tonumber(ir[1])
      total = total + amount
      query(string.format("INSERT INTO order_line VALUES (%d, %d, %d, %d, %d, %d, NULL, %d, %.2f, '%s')", o_id, d, w,
                          n, l.item, l.supply, l.qty, amount, sr[3]))
    end
    total = total * (1 - discount) * (1 + w_tax + d_tax) -- shown to the terminal in TPC-C
    query("COMMIT")
    return "commit"
  end
end

local function payment(w)
  local d = uniform(1, 10)
  local c_w, c_d = w, d
  if sizes.warehouses > 1 and uniform(1, 100) <= 15 then
    c_w, c_d = other_warehouse(w), uniform(1, 10)
  end
  local by_name = uniform(1, 100) <= 60
  local last = by_name and T.run_last_name(sizes) or nil
  local c_id = not by_name and nurand(1023, 1, sizes.customers, T.C_ID) or nil
  local amount = uniform(100, 500000) / 100
  return function()
    query("BEGIN")
    query(string.format("UPDATE warehouse SET w_ytd = w_ytd + %.2f WHERE w_id = %d", amount, w))
    local wr = row("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = " .. w)
    query(string.format("UPDATE district SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d", amount, w, d))
    local dr = row(string.format(
      "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = %d AND d_id = %d",
      w, d))
    local c = c_id or customer_by_name(c_w, c_d, last)
    local where = string.format("WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", c_w, c_d, c)
    local cr = row("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, " ..
                     "c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer " .. where ..
                     " FOR UPDATE")
    local set = string.format("c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + %.2f, " ..
                                "c_payment_cnt = c_payment_cnt + 1", amount, amount)
    if cr[11] == "BC" then
      local old = row("SELECT c_data FROM customer " .. where)[1] or ""
      local data = (string.format("%d %d %d %d %d %.2f|", c, c_d, c_w, d, w, amount) .. old):sub(1, 500)
      set = set .. ", c_data = '" .. data .. "'"
    end
    query("UPDATE customer SET " .. set .. " " .. where)
    query(string.format("INSERT INTO history VALUES (%d, %d, %d, %d, %d, NOW(), %.2f, '%s')", c, c_d, c_w, d, w,
                        amount, (wr[1] .. "    " .. dr[1]):sub(1, 24)))
    query("COMMIT")
    return "commit"
  end
end

local function order_status(w)
  local d = uniform(1, 10)
  local by_name = uniform(1, 100) <= 60
  local last = by_name and T.run_last_name(sizes) or nil
  local c_id = not by_name and nurand(1023, 1, sizes.customers, T.C_ID) or nil
  return function()
    query("BEGIN")
    local c = c_id or customer_by_name(w, d, last)
    row(string.format(
      "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w,
      d, c))
    local o = row(string.format("SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = %d AND o_d_id = %d " ..
                                  "AND o_c_id = %d ORDER BY o_id DESC LIMIT 1", w, d, c))
    if o ~= nil then
      local rs = query(string.format("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d " ..
                                       "FROM order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w,
                                     d, o[1]))
      while rs:fetch_row() do end
    end
    query("COMMIT")
    return "commit"
  end
end

local function delivery(w)
  local carrier = uniform(1, 10)
  return function()
    query("BEGIN")
    for d = 1, 10 do
      local no = row(string.format("SELECT no_o_id FROM new_orders WHERE no_w_id = %d AND no_d_id = %d " ..
                                     "ORDER BY no_o_id LIMIT 1 FOR UPDATE", w, d))
      if no ~= nil then -- none left in the district: skipped (clause 2.7.4.2)
        local o = tonumber(no[1])
        query(string.format("DELETE FROM new_orders WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %d", w, d, o))
        local order = string.format("WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", w, d, o)
        local lines = string.format("WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", w, d, o)
        local c = tonumber(row("SELECT o_c_id FROM orders " .. order)[1])
        query(string.format("UPDATE orders SET o_carrier_id = %d ", carrier) .. order)
        query("UPDATE order_line SET ol_delivery_d = NOW() " .. lines)
        local sum = row("SELECT SUM(ol_amount) FROM order_line " .. lines)[1] or "0"
        query(string.format("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 " ..
                              "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", sum, w, d, c))
      end
    end
    query("COMMIT")
    return "commit"
  end
end

local function stock_level(w)
  local d = uniform(1, 10)
  local threshold = uniform(10, 20)
  return function()
    query("BEGIN")
    local next_o = tonumber(row(string.format(
      "SELECT d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d", w, d))[1])
    row(string.format("SELECT COUNT(DISTINCT s.s_i_id) FROM order_line ol JOIN stock s " ..
                        "ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id " ..
                        "WHERE ol.ol_w_id = %d AND ol.ol_d_id = %d AND ol.ol_o_id >= %d AND ol.ol_o_id < %d " ..
                        "AND s.s_quantity < %d", w, d, next_o - 20, next_o, threshold))
    query("COMMIT")
    return "commit"
  end
end

local function run_transaction(kind, body)
  local t0 = T.now()
  local attempts = 0
  while true do
    local ok, res = pcall(body)
    if ok then
      T.record(stats, kind, res, T.now() - t0)
      return
    end
    pcall(con.query, con, "ROLLBACK")
    local errno = type(res) == "table" and res.sql_errno or nil
    if errno ~= nil and T.RETRYABLE[errno] and attempts < max_retries then
      attempts = attempts + 1
      stats.retries = stats.retries + 1
      -- A random pause, doubling with each attempt up to 50 ms, so that two transactions
      -- that keep colliding (e.g. two deliveries of one warehouse) fall out of step.
      ffi.C.usleep(uniform(0, math.min(1000 * 2 ^ attempts, 50000)))
    else
      stats.errors = stats.errors + 1
      if stats.errors <= 5 then
        local what = type(res) == "table" and string.format("%d %s in %s", errno, res.sql_errmsg, res.query) or
                       tostring(res)
        io.stderr:write(string.format("tpcc: thread %d: %s failed: %s\n", thread_id, kind, what))
      end
      if errno == 2006 or errno == 2013 then pcall(con.reconnect, con) end
      return
    end
  end
end

function event()
  if stats.started == nil then stats.started = T.now() end
  local w = home_warehouse()
  local r = uniform(1, 100)
  if r <= 45 then
    run_transaction("new_order", new_order(w))
  elseif r <= 88 then
    run_transaction("payment", payment(w))
  elseif r <= 92 then
    run_transaction("order_status", order_status(w))
  elseif r <= 96 then
    run_transaction("delivery", delivery(w))
  else
    run_transaction("stock_level", stock_level(w))
  end
end

function thread_done()
  stats.finished = T.now()
  T.write_stats(stats, T.stats_path(thread_id))
  con:disconnect()
end

-- In the main thread after every thread_done: merge the threads' statistics and report.
function done()
  local all = T.new_stats()
  local found = 0
  for tid = 0, sysbench.opt.threads - 1 do
    if T.merge_stats(all, T.stats_path(tid)) then found = found + 1 end
  end
  if found == 0 then return end
  local seconds = (all.finished or 0) - (all.started or 0)
  local transactions, rollbacks = 0, 0
  for _, name in ipairs(T.TYPES) do
    local t = all.types[name]
    transactions = transactions + t.commits + t.rollbacks
    rollbacks = rollbacks + t.rollbacks
    print(string.format("tpcc-type: %s commits=%d rollbacks=%d p50_ms=%.3f p95_ms=%.3f p99_ms=%.3f", name, t.commits,
                        t.rollbacks, T.percentile_ms(t.hist, 0.50), T.percentile_ms(t.hist, 0.95),
                        T.percentile_ms(t.hist, 0.99)))
  end
  local new_orders = all.types.new_order.commits
  local p99 = {}
  for i, name in ipairs(T.TYPES) do p99[i] = string.format("p99_%s_ms=%.3f", name, T.percentile_ms(all.types[name].hist, 0.99)) end
  print(string.format("tpcc: seconds=%.2f transactions=%d new_orders=%d nopm=%.1f %s errors=%d retries=%d rollbacks=%d",
                      seconds, transactions, new_orders, seconds > 0 and new_orders * 60 / seconds or 0,
                      table.concat(p99, " "), all.errors, all.retries, rollbacks))
end
