-- The prompt sandbox's Lua half: the prompt's environment and the driver (see prelude.py).
local py_call, py_check, dialect, budget, matcher_source, py_arm, py_disarm = ...

-- captured before the dangerous globals are removed -------------------------------------------
local debug_sethook, debug_getmetatable = debug.sethook, debug.getmetatable
local raw_pcall, raw_xpcall, raw_load, raw_error = pcall, xpcall, load, error
local type, tostring, select, next, pairs, ipairs = type, tostring, select, next, pairs, ipairs
local rawget, rawset, rawequal, rawlen = rawget, rawset, rawequal, rawlen
local setmetatable, getmetatable = setmetatable, getmetatable
local table_pack, table_unpack, table_concat = table.pack, table.unpack, table.concat
local co_create, co_resume, co_status = coroutine.create, coroutine.resume, coroutine.status
local co_close, co_yield, co_running = coroutine.close, coroutine.yield, coroutine.running
local co_isyieldable = coroutine.isyieldable
local math_type = math.type
local string_find = string.find
local string_mt = getmetatable("")

-- limits ----------------------------------------------------------------------------------------
-- The memory limit is armed only while Lua code runs (see runvil/prompts/_budget.py): every value
-- lupa converts or pushes for a host call crosses with it disarmed, because an allocation that
-- failed on the limit inside lupa would jump over its release of the GIL and freeze the process.
-- py_arm() re-arms it and says whether the state is still within it; py_check() answers true or
-- false, which lupa pushes without allocating.
local HOST_STOP = "stopped"
local KILL = setmetatable({}, {__name = "runvil.stop", __metatable = false,
                               __tostring = function() return "run stopped" end})
local killed = nil
local count = 0
local ticks = 0

-- Raising the kill re-arms the memory limit first (Python leaves it disarmed inside a host call):
-- a kill can land while it is disarmed, and whatever still runs as the error unwinds (a prompt's
-- __close handler in a resuming coroutine) must run under it.
local function die()
  py_arm()
  raw_error(KILL, 0)
end

local function kill(reason)
  if not killed then killed = reason end
  debug_sethook(die, "", 1)
  die()
end

-- The deadline is polled every 10 hook calls, or sooner when the CPU clock says time went by:
-- one instruction can cost a lot (comparing or concatenating long strings), so a count alone
-- could leave seconds between polls.
local os_clock = os.clock
local last_poll = os_clock()
local function hook()
  if killed then kill(killed) end
  count = count + 1000
  if count > budget then kill("instructions") end
  ticks = ticks + 1
  local now = os_clock()
  if ticks >= 10 or now - last_poll >= 0.02 then
    ticks = 0
    last_poll = now
    if py_check() then kill(HOST_STOP) end
  end
end

-- C functions run without hook calls, so the ones whose cost grows with their input or output
-- are charged by size: one instruction per 16 bytes scanned or built. Without this a loop of a
-- few instructions around string.rep or string.find on a large string could run for minutes on
-- a budget meant for seconds.
local function charge(bytes)
  count = count + bytes // 16
  if count > budget then kill("instructions") end
end

local function arm(co)
  debug_sethook(co, hook, "", 1000)
  return co
end

local function after_catch(ok, ...)
  if killed then die() end
  if not ok then
    local e = ...
    if rawequal(e, KILL) then die() end
    if e == "not enough memory" then killed = "memory"; die() end
  end
  return ok, ...
end

local function s_pcall(f, ...)
  return after_catch(raw_pcall(f, ...))
end

local function s_xpcall(f, handler, ...)
  if type(handler) ~= "function" then
    raw_error("bad argument #2 to 'xpcall' (function expected, got " .. type(handler) .. ")", 2)
  end
  local function guarded(e)
    if killed or rawequal(e, KILL) then return KILL end
    return handler(e)
  end
  return after_catch(raw_xpcall(f, guarded, ...))
end

local s_coroutine = {}
function s_coroutine.create(f) return arm(co_create(f)) end
function s_coroutine.resume(co, ...) return after_catch(co_resume(co, ...)) end
function s_coroutine.close(co) return after_catch(co_close(co)) end
local function wrap_results(ok, ...)
  if killed then die() end
  if not ok then
    local e = ...
    if e == "not enough memory" then killed = "memory"; die() end
    raw_error(e, 0)
  end
  return ...
end
function s_coroutine.wrap(f)
  local co = arm(co_create(f))
  return function(...) return wrap_results(co_resume(co, ...)) end
end
s_coroutine.status, s_coroutine.yield, s_coroutine.running = co_status, co_yield, co_running
s_coroutine.isyieldable = co_isyieldable

-- calling the host ------------------------------------------------------------------------------
local NAMES = {tool_call = "tools.call", tool_info = "tools.get", offer = "tools.offer",
               pack_offer = "packs.offer", model_use = "models.use", model_loop = "models.loop",
               untrusted = "untrusted", json_encode = "json.encode", json_decode = "json.decode",
               print = "print"}

local function finish(op, ok, status, ...)
  local failure
  if not ok then
    -- still disarmed: tostring of the Python exception lupa handed back calls into Python
    local text = tostring(status)
    if string_find(text, "codec can't decode", 1, true) then
      failure = NAMES[op] .. ": strings must be valid UTF-8"
    else
      failure = NAMES[op] .. ": " .. text
    end
  end
  local fits = py_arm()
  if killed then die() end
  if not fits then kill("memory") end
  if failure then raw_error(failure, 0) end
  if status == "kill" then kill((...)) end
  if status == "err" then raw_error((...), 0) end
  return status, ...
end

local function call(op, ...)
  py_disarm()
  return finish(op, raw_pcall(py_call, op, ...))
end

-- error values ----------------------------------------------------------------------------------
local UNCAUGHT = setmetatable({}, {__mode = "k"})
local ERR_MT = {__name = "runvil.error", __metatable = false,
                __tostring = function(e) return rawget(e, "message") end}

local function raise(kind, run_kind, message, run_text)
  local e = setmetatable({kind = kind, message = message}, ERR_MT)
  UNCAUGHT[e] = {run_kind, run_text}
  raw_error(e, 0)
end

local function raise_tool(bare)
  local message = bare
  if dialect == "promptforge" then message = "tool call failure: " .. bare end
  raise("tool", "Tool", message, "tool call failure: " .. bare)
end

-- JSON values -----------------------------------------------------------------------------------
local NULL = setmetatable({}, {__name = "json.null", __metatable = false,
                               __tostring = function() return "json.null" end,
                               __newindex = function() raw_error("json.null is read-only", 2) end})
local ARRAY_MT = {__name = "json.array", __metatable = "json.array"}
local TOOL_MT, PACK_MT

local function classify(t)
  if rawequal(t, NULL) then return "null", 0 end
  local mt = debug_getmetatable(t)
  if mt ~= nil and (mt == TOOL_MT or mt == PACK_MT) then return "tool", 0 end
  local n, max, strings = 0, 0, 0
  for k in next, t do
    if math_type(k) == "integer" and k >= 1 then
      n = n + 1
      if k > max then max = k end
    elseif type(k) == "string" then
      strings = strings + 1
    else
      return "badkey", type(k)
    end
  end
  if mt == ARRAY_MT then
    if strings > 0 or max ~= n then return "mixed", 0 end
    return "array", n
  end
  if n == 0 then return "object", 0 end
  if strings > 0 or max ~= n then return "mixed", 0 end
  return "array", n
end

local function mark_array(t) return setmetatable(t, ARRAY_MT) end

local json = {null = NULL}
function json.array(t)
  if t == nil then t = {} end
  if type(t) ~= "table" then
    raw_error("json.array expects a table or nothing, got " .. type(t), 0)
  end
  local mt = debug_getmetatable(t)
  if mt ~= nil and mt ~= ARRAY_MT then
    raw_error("json.array: the table already has a metatable", 0)
  end
  return setmetatable(t, ARRAY_MT)
end
function json.encode(v)
  local _, text = call("json_encode", v)
  charge(#text * 4)
  return text
end
function json.decode(s)
  if type(s) ~= "string" then raw_error("json.decode expects a string, got " .. type(s), 0) end
  charge(#s * 4)
  local _, v = call("json_decode", s)
  return v
end

-- Tool and Pack objects -------------------------------------------------------------------------
local FIELDS = setmetatable({}, {__mode = "k"})
local TOOL_KEY = setmetatable({}, {__mode = "k"})
local TOOL_CACHE = {}
local PACK_CACHE = {}

local function readonly(kind)
  return {
    __index = function(p, k) return FIELDS[p][k] end,
    __newindex = function(_, k)
      raw_error(kind .. " objects are read-only (cannot set '" .. tostring(k) .. "')", 2)
    end,
    __pairs = function(p) return next, FIELDS[p], nil end,
    __len = function(p) return #FIELDS[p] end,
    __tostring = function(p) return kind .. " " .. tostring(FIELDS[p].id) end,
    __name = kind,
    __metatable = kind,
  }
end
TOOL_MT = readonly("Tool")
PACK_MT = readonly("Pack")

local get_tool

local function make_pack(info)
  local cached = PACK_CACHE[info.id]
  if cached then return cached end
  local pack = setmetatable({}, PACK_MT)
  PACK_CACHE[info.id] = pack
  local fields = {id = info.id, name = info.name}
  local list = {}
  for i = 1, #info.tools do list[i] = get_tool(info.tools[i]) end
  fields.tools = list
  FIELDS[pack] = fields
  return pack
end

get_tool = function(key)
  local cached = TOOL_CACHE[key]
  if cached then return cached end
  local _, info = call("tool_info", key)
  local tool = setmetatable({}, TOOL_MT)
  TOOL_CACHE[key] = tool
  TOOL_KEY[tool] = key
  local fields = {}
  for k, v in next, info do
    if k ~= "pack" then fields[k] = v end
  end
  FIELDS[tool] = fields
  if info.pack ~= nil and not rawequal(info.pack, NULL) then fields.pack = make_pack(info.pack) end
  return tool
end

local function tool_ref(t, fname)
  if type(t) == "string" then return t end
  if type(t) == "table" and debug_getmetatable(t) == TOOL_MT then return TOOL_KEY[t] end
  raw_error(fname .. " expects a tool " .. (dialect == "promptforge" and "alias" or "id")
            .. " or a Tool object, got " .. type(t), 0)
end

local tools = {}
function tools.call(t, args)
  local key = tool_ref(t, "tools.call")
  if args == nil then args = {} end
  if type(args) ~= "table" then
    raw_error("tools.call expects an argument table, got " .. type(args), 0)
  end
  local status, value = call("tool_call", key, args)
  if status == "tool" then raise_tool(value) end
  return value
end

local function each_tool(t, fname, f)
  if type(t) == "table" and debug_getmetatable(t) ~= TOOL_MT then
    for i = 1, #t do f(tool_ref(t[i], fname)) end
  else
    f(tool_ref(t, fname))
  end
end

local function offer(fname, scope)
  return function(t, description)
    if description ~= nil and type(description) ~= "string" then
      raw_error(fname .. " expects a string description, got " .. type(description), 0)
    end
    each_tool(t, fname, function(key) call("offer", key, description, scope, fname) end)
  end
end

local packs = {}
if dialect == "runvil" then
  tools.offer = offer("tools.offer", "section")
  function tools.get(t) return get_tool(tool_ref(t, "tools.get")) end
  function packs.offer(id)
    if type(id) ~= "string" then raw_error("packs.offer expects a Pack id, got " .. type(id), 0) end
    call("pack_offer", id)
  end
else
  tools.add = offer("tools.add", "section")
  tools.always = offer("tools.always", "always")
end

-- messages and models ---------------------------------------------------------------------------
local MSG_METHODS = {}
local MSGS_MT = {__index = MSG_METHODS, __name = "messages"}
local function new_messages() return setmetatable({}, MSGS_MT) end

local function adder(role)
  return function(self, text)
    if type(self) ~= "table" or debug_getmetatable(self) ~= MSGS_MT then
      raw_error("messages:" .. role .. " must be called with ':' on a messages list", 0)
    end
    if type(text) ~= "string" then
      raw_error("messages:" .. role .. " expects a string, got " .. type(text), 0)
    end
    self[#self + 1] = {role = role, content = text}
    return self
  end
end
MSG_METHODS.user, MSG_METHODS.system, MSG_METHODS.assistant =
  adder("user"), adder("system"), adder("assistant")

local ENV = {}
local models = {}
local function use(fname)
  return function(role)
    if type(role) ~= "string" then
      raw_error(fname .. " expects a role name, got " .. type(role), 0)
    end
    call("model_use", role, fname)
  end
end
function models.loop(msgs)
  if msgs == nil and dialect == "runvil" then msgs = rawget(ENV, "messages") end
  if type(msgs) ~= "table" or debug_getmetatable(msgs) ~= MSGS_MT then
    local hint = dialect == "runvil" and "" or " from messages.new()"
    raw_error("models.loop expects a messages list" .. hint .. ", got " .. type(msgs), 0)
  end
  local status, value = call("model_loop", msgs)
  if status == "model" then raise("model", "Model", value, value) end
  local added = json.decode(value)
  for i = 1, #added do
    local record = added[i]
    setmetatable(record, nil)
    msgs[#msgs + 1] = record
  end
  local last = msgs[#msgs]
  return last and last.content
end
if dialect == "runvil" then
  models.use = use("models.use")
else
  models.default = use("models.default")
end

local function s_untrusted(s)
  if type(s) ~= "string" then raw_error("untrusted expects a string, got " .. type(s), 0) end
  local _, text = call("untrusted", s)
  return text
end

local function s_print(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  call("print", table_concat(parts, "\t"))
end

-- the environment -------------------------------------------------------------------------------
local function copy(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end

string.dump = nil
do
  local s_rep, s_len, s_format = string.rep, string.len, string.format
  local function len(v) return type(v) == "string" and s_len(v) or 0 end
  function string.rep(str, n, sep)
    if type(n) == "number" and n > 0 then
      charge((len(str) + len(sep)) * (n < 2^40 and n or 2^40))
    end
    return s_rep(str, n, sep)
  end
  local function start(str, init)
    init = math_type(init) == "integer" and init or 1
    if init < 0 then init = len(str) + init + 1 end
    return init < 1 and 1 or init
  end
  for _, name in ipairs{"upper", "lower", "reverse"} do
    local f = string[name]
    string[name] = function(str, ...)
      charge(len(str))
      return f(str, ...)
    end
  end
  -- Matches whose worst case is large run in the Lua port of the matcher, where the hook and
  -- the deadline reach every step (see runvil/prompts/_patterns.py); the rest run in C.
  local M = raw_load(matcher_source, "=[patterns]", "t")()
  local s_find, s_match, s_sub, s_byte = string.find, string.match, string.sub, string.byte
  local s_gmatch, s_gsub, s_tostring, s_tonumber = string.gmatch, string.gsub, tostring, tonumber
  local tointeger = math.tointeger
  local PATTERN_STEPS = 4000000
  local function text(v)
    if type(v) == "number" then return s_tostring(v) end
    return v
  end
  local function integer(v, name, position)
    if v == nil then return 1 end
    local i = tointeger(v)
    if i == nil and type(v) == "string" then i = tointeger(s_tonumber(v)) end
    if i == nil then
      raw_error("bad argument #" .. position .. " to '" .. name .. "' (number expected)", 0)
    end
    return i
  end
  local function costly(str, pattern)
    return type(str) == "string" and type(pattern) == "string"
      and M.costly(str, pattern, PATTERN_STEPS)
  end
  local function found(str, init, a, b, ...)
    charge((b or len(str)) - start(str, init) + 1)
    return a, b, ...
  end
  function string.find(str, pattern, init, plain)
    local s, p = text(str), text(pattern)
    if not plain and costly(s, p) then return M.find(s, p, integer(init, "find", 3)) end
    return found(str, init, s_find(str, pattern, init, plain))
  end
  function string.match(str, pattern, init)
    local s, p = text(str), text(pattern)
    if costly(s, p) then return M.match(s, p, integer(init, "match", 3)) end
    if type(pattern) ~= "string" or s_sub(pattern, 1, 1) ~= "^" then
      charge(len(str) - start(str, init) + 1)
    end
    return s_match(str, pattern, init)
  end
  function string.gmatch(str, pattern, init)
    local s, p = text(str), text(pattern)
    if costly(s, p) then return M.gmatch(s, p, integer(init, "gmatch", 3)) end
    charge(len(str))
    return s_gmatch(str, pattern, init)
  end
  function string.gsub(str, pattern, repl, n)
    local s, p, tr = text(str), text(pattern), type(repl)
    if costly(s, p) and (tr == "string" or tr == "number" or tr == "table" or tr == "function") then
      if n ~= nil then n = integer(n, "gsub", 4) end
      return M.gsub(s, p, repl, n)
    end
    charge(len(str))
    return s_gsub(str, pattern, repl, n)
  end
  function string.sub(str, i, j)
    local out = s_sub(str, i, j)
    charge(len(out))
    return out
  end
  function string.byte(str, i, j)
    if type(i) == "number" and type(j) == "number" then charge(j - i + 1) end
    return s_byte(str, i, j)
  end
  function string.format(fmt, ...)
    local out = s_format(fmt, ...)
    charge(s_len(out))
    return out
  end
  local t_concat = table.concat
  function table.concat(...)
    local out = t_concat(...)
    charge(s_len(out))
    return out
  end
end
string_mt.__metatable = false

ENV._VERSION = _VERSION
for _, name in ipairs{"assert", "error", "ipairs", "next", "pairs", "rawequal", "rawget",
                      "rawlen", "rawset", "select", "setmetatable", "getmetatable", "tonumber",
                      "tostring", "type"} do
  ENV[name] = _G[name]
end
ENV.pcall, ENV.xpcall, ENV.print = s_pcall, s_xpcall, s_print
-- Finalizers run with debug hooks switched off (lgc.c, GCTM), so a __gc metamethod would escape
-- the instruction budget, and one that never returns would freeze the process when the state is
-- closed. Prompts get setmetatable without __gc.
ENV.setmetatable = function(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    raw_error("setmetatable: __gc metamethods are not available in prompts", 2)
  end
  return setmetatable(t, mt)
end
ENV.string, ENV.table, ENV.math, ENV.utf8 = copy(string), copy(table), copy(math), copy(utf8)
ENV.coroutine = s_coroutine
ENV.os = {time = os.time, clock = os.clock, date = os.date, difftime = os.difftime}
ENV.json, ENV.tools, ENV.models = json, tools, models
if dialect == "runvil" then
  ENV.packs = packs
  ENV.untrusted = s_untrusted
else
  ENV.messages = {new = new_messages}
end
ENV._G = ENV

for _, name in ipairs{"os", "io", "load", "loadfile", "dofile", "require", "debug", "package",
                      "collectgarbage", "python", "loadstring", "module", "string"} do
  _G[name] = nil
end

-- the driver ------------------------------------------------------------------------------------
local HANDLED = {}

local function describe(e)
  if type(e) == "string" then return e end
  if type(e) == "number" then return tostring(e) end
  local mt = debug_getmetatable(e)
  if type(mt) == "table" and rawget(mt, "__tostring") ~= nil then
    local ok, s = raw_pcall(tostring, e)
    if ok and type(s) == "string" then return s end
  end
  return "(error object is a " .. type(e) .. " value)"
end

local function handler(e)
  if killed or rawequal(e, KILL) then return KILL end
  local uncaught = type(e) == "table" and UNCAUGHT[e]
  if uncaught then return setmetatable({uncaught[1], uncaught[2]}, HANDLED) end
  return setmetatable({"Lua", describe(e)}, HANDLED)
end

local api = {classify = classify, mark_array = mark_array, null = NULL}

-- Entry points Python calls arm the limit before they run anything of the prompt's, and disarm
-- it before they return, because lupa converts what they return (a table takes a registry slot).
local function settle(...)
  py_disarm()
  return ...
end

function api.compile(code, chunkname)
  if not py_arm() then return settle(nil, "not enough memory") end
  local fn, err = raw_load(code, chunkname, "t", ENV)
  return settle(fn, err)
end

function api.begin_section(prose)
  ENV.prose = prose
  if dialect == "runvil" then ENV.messages = new_messages() end
end


local function outcome(rok, xok, res)
  if killed then return "limit", killed end
  if not rok then
    if xok == "not enough memory" then return "limit", "memory" end
    return "Lua", describe(xok)
  end
  if xok then
    local t = type(res)
    if t == "number" or t == "boolean" then return "ok", tostring(res) end
    return "ok", res
  end
  if res == "not enough memory" then return "limit", "memory" end
  if type(res) == "table" and debug_getmetatable(res) == HANDLED then return res[1], res[2] end
  return "Lua", describe(res)
end

function api.run(fn)
  if not py_arm() then return settle("limit", "memory") end
  local co = arm(co_create(function() return raw_xpcall(fn, handler) end))
  local rok, xok, res = co_resume(co)
  if not killed and co_status(co) == "suspended" then
    return settle("Lua", "attempt to yield from outside a coroutine")
  end
  return settle(outcome(rok, xok, res))
end

function api.bind_alias(alias)
  return api.run(function() ENV[alias] = get_tool(alias) end)
end

function api.killed() return killed end

return api
