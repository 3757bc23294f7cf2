-- Lua's pattern matcher (lstrlib.c) ported to Lua, so the hook can stop it (see patterns.py).
local byte, sub, format, s_find = string.byte, string.sub, string.format, string.find
local type, tostring, error, tointeger = type, tostring, error, math.tointeger
local select, rawequal = select, rawequal
local table_concat, unpack = table.concat, table.unpack

local pcall, getmetatable, setmetatable = pcall, getmetatable, setmetatable
local pack = table.pack

local L_ESC, MAXCAPTURES, MAXCCALLS = 37, 32, 200

-- Pattern errors are raised as marked values inside the port, and re-raised as plain messages
-- at the level where C's luaL_error would have placed them (the caller of string.find).
local PE = {}
local function perror(msg) error(setmetatable({msg}, PE), 0) end
local CAP_UNFINISHED, CAP_POSITION = -1, -2
local B_OPEN, B_CLOSE, B_CARET, B_DASH, B_DOT, B_DOLLAR = 91, 93, 94, 45, 46, 36
local B_LPAREN, B_RPAREN, B_STAR, B_PLUS, B_QUESTION = 40, 41, 42, 43, 63

-- character classes in the C locale, as lstrlib sees them
local CLASS = {}
do
  local function set(name, test)
    local t = {}
    for c = 0, 255 do t[c] = test(c) end
    CLASS[name] = t
  end
  local function alpha(c) return (c >= 65 and c <= 90) or (c >= 97 and c <= 122) end
  local function digit(c) return c >= 48 and c <= 57 end
  set(97, alpha)                                                        -- a
  set(99, function(c) return c < 32 or c == 127 end)                    -- c
  set(100, digit)                                                       -- d
  set(103, function(c) return c >= 33 and c <= 126 end)                 -- g
  set(108, function(c) return c >= 97 and c <= 122 end)                 -- l
  set(112, function(c)                                                  -- p
    return c >= 33 and c <= 126 and not alpha(c) and not digit(c)
  end)
  set(115, function(c) return (c >= 9 and c <= 13) or c == 32 end)      -- s
  set(117, function(c) return c >= 65 and c <= 90 end)                  -- u
  set(119, function(c) return alpha(c) or digit(c) end)                 -- w
  set(120, function(c)                                                  -- x
    return digit(c) or (c >= 65 and c <= 70) or (c >= 97 and c <= 102)
  end)
end

local function match_class(c, cl)
  local lower = cl
  if cl >= 65 and cl <= 90 then lower = cl + 32 end
  local t = CLASS[lower]
  if t == nil then return cl == c end
  local res = t[c]
  if lower ~= cl then return not res end
  return res
end

local function class_end(ms, p)
  local pat = ms.pat
  local c = byte(pat, p)
  p = p + 1
  if c == L_ESC then
    if p > ms.p_end then perror("malformed pattern (ends with '%')") end
    return p + 1
  elseif c == B_OPEN then
    if byte(pat, p) == B_CARET then p = p + 1 end
    repeat
      if p > ms.p_end then perror("malformed pattern (missing ']')") end
      local cc = byte(pat, p)
      p = p + 1
      if cc == L_ESC and p <= ms.p_end then p = p + 1 end
    until byte(pat, p) == B_CLOSE
    return p + 1
  end
  return p
end

local function match_bracket_class(ms, c, p, ec)
  local pat = ms.pat
  local sig = true
  if byte(pat, p + 1) == B_CARET then
    sig = false
    p = p + 1
  end
  p = p + 1
  while p < ec do
    local pc = byte(pat, p)
    if pc == L_ESC then
      p = p + 1
      if match_class(c, byte(pat, p)) then return sig end
    elseif byte(pat, p + 1) == B_DASH and p + 2 < ec then
      if pc <= c and c <= byte(pat, p + 2) then return sig end
      p = p + 2
    elseif pc == c then
      return sig
    end
    p = p + 1
  end
  return not sig
end

local function single_match(ms, s, p, ep)
  if s > ms.src_end then return false end
  local c = byte(ms.src, s)
  local pc = byte(ms.pat, p)
  if pc == B_DOT then return true end
  if pc == L_ESC then return match_class(c, byte(ms.pat, p + 1)) end
  if pc == B_OPEN then return match_bracket_class(ms, c, p, ep - 1) end
  return pc == c
end

local do_match

local function match_balance(ms, s, p)
  if p >= ms.p_end then perror("malformed pattern (missing arguments to '%b')") end
  if s > ms.src_end or byte(ms.src, s) ~= byte(ms.pat, p) then return nil end
  local b, e = byte(ms.pat, p), byte(ms.pat, p + 1)
  local cont = 1
  s = s + 1
  while s <= ms.src_end do
    local c = byte(ms.src, s)
    if c == e then
      cont = cont - 1
      if cont == 0 then return s + 1 end
    elseif c == b then
      cont = cont + 1
    end
    s = s + 1
  end
  return nil
end

local function max_expand(ms, s, p, ep)
  local i = 0
  while single_match(ms, s + i, p, ep) do i = i + 1 end
  while i >= 0 do
    local res = do_match(ms, s + i, ep + 1)
    if res then return res end
    i = i - 1
  end
  return nil
end

local function min_expand(ms, s, p, ep)
  while true do
    local res = do_match(ms, s, ep + 1)
    if res then return res end
    if single_match(ms, s, p, ep) then s = s + 1 else return nil end
  end
end

local function start_capture(ms, s, p, what)
  local level = ms.level
  if level >= MAXCAPTURES then perror("too many captures") end
  ms.cinit[level] = s
  ms.clen[level] = what
  ms.level = level + 1
  local res = do_match(ms, s, p)
  if res == nil then ms.level = ms.level - 1 end
  return res
end

local function end_capture(ms, s, p)
  local l = -1
  for level = ms.level - 1, 0, -1 do
    if ms.clen[level] == CAP_UNFINISHED then l = level; break end
  end
  if l < 0 then perror("invalid pattern capture") end
  ms.clen[l] = s - ms.cinit[l]
  local res = do_match(ms, s, p)
  if res == nil then ms.clen[l] = CAP_UNFINISHED end
  return res
end

local function match_capture(ms, s, l)
  l = l - 49
  if l < 0 or l >= ms.level or ms.clen[l] == CAP_UNFINISHED then
    perror(format("invalid capture index %%%d", l + 1))
  end
  local len = ms.clen[l]
  if ms.src_end - s + 1 >= len
     and sub(ms.src, ms.cinit[l], ms.cinit[l] + len - 1) == sub(ms.src, s, s + len - 1) then
    return s + len
  end
  return nil
end

do_match = function(ms, s, p)
  if ms.depth == 0 then perror("pattern too complex") end
  ms.depth = ms.depth - 1
  local pat, p_end = ms.pat, ms.p_end
  while true do
    if p > p_end then break end
    local pc = byte(pat, p)
    if pc == B_LPAREN then
      if byte(pat, p + 1) == B_RPAREN then
        s = start_capture(ms, s, p + 2, CAP_POSITION)
      else
        s = start_capture(ms, s, p + 1, CAP_UNFINISHED)
      end
      break
    elseif pc == B_RPAREN then
      s = end_capture(ms, s, p + 1)
      break
    elseif pc == B_DOLLAR and p + 1 > p_end then
      if s ~= ms.src_end + 1 then s = nil end
      break
    elseif pc == L_ESC and byte(pat, p + 1) == 98 then            -- %b
      s = match_balance(ms, s, p + 2)
      if s == nil then break end
      p = p + 4
    elseif pc == L_ESC and byte(pat, p + 1) == 102 then           -- %f
      p = p + 2
      if byte(pat, p) ~= B_OPEN then perror("missing '[' after '%f' in pattern") end
      local ep = class_end(ms, p)
      local previous = s == 1 and 0 or byte(ms.src, s - 1)
      local current = s <= ms.src_end and byte(ms.src, s) or 0
      if not match_bracket_class(ms, previous, p, ep - 1)
         and match_bracket_class(ms, current, p, ep - 1) then
        p = ep
      else
        s = nil
        break
      end
    elseif pc == L_ESC and (byte(pat, p + 1) or 0) >= 48 and (byte(pat, p + 1) or 0) <= 57 then
      s = match_capture(ms, s, byte(pat, p + 1))
      if s == nil then break end
      p = p + 2
    else
      local ep = class_end(ms, p)
      local epc = byte(pat, ep)
      if not single_match(ms, s, p, ep) then
        if epc == B_STAR or epc == B_QUESTION or epc == B_DASH then
          p = ep + 1
        else
          s = nil
          break
        end
      elseif epc == B_QUESTION then
        local res = do_match(ms, s + 1, ep + 1)
        if res ~= nil then
          s = res
          break
        end
        p = ep + 1
      elseif epc == B_PLUS then
        s = max_expand(ms, s + 1, p, ep)
        break
      elseif epc == B_STAR then
        s = max_expand(ms, s, p, ep)
        break
      elseif epc == B_DASH then
        s = min_expand(ms, s, p, ep)
        break
      else
        s = s + 1
        p = ep
      end
    end
  end
  ms.depth = ms.depth + 1
  return s
end

local function new_state(src, pat, p_start)
  return {src = src, src_end = #src, pat = pat, p_end = #pat, p_start = p_start,
          level = 0, cinit = {}, clen = {}, depth = MAXCCALLS}
end

local function reset(ms)
  ms.level = 0
  ms.depth = MAXCCALLS
end

local function get_capture(ms, i, s, e)
  if i >= ms.level then
    if i ~= 0 then perror(format("invalid capture index %%%d", i + 1)) end
    return sub(ms.src, s, e - 1)
  end
  local l = ms.clen[i]
  if l == CAP_UNFINISHED then perror("unfinished capture") end
  if l == CAP_POSITION then return ms.cinit[i] end
  return sub(ms.src, ms.cinit[i], ms.cinit[i] + l - 1)
end

local function captures(ms, s, e, whole)
  local n = (ms.level == 0 and whole) and 1 or ms.level
  local out = {}
  for i = 0, n - 1 do out[i + 1] = get_capture(ms, i, s, e) end
  return out, n
end

local function start_index(init, len)
  if init > 0 then return init end
  if init == 0 then return 1 end
  if init < -len then return 1 end
  return len + init + 1
end

local M = {}

local function find_impl(src, pat, init, find)
  local ls = #src
  init = start_index(init, ls)
  if init > ls + 1 then return nil end
  if find and not s_find(pat, "[%^%$%*%+%?%.%(%[%%%-]") then
    return s_find(src, pat, init, true)
  end
  local p = 1
  local anchor = byte(pat, 1) == B_CARET
  if anchor then p = 2 end
  local ms = new_state(src, pat, p)
  local s1 = init
  repeat
    reset(ms)
    local e = do_match(ms, s1, p)
    if e ~= nil then
      if find then
        local caps, n = captures(ms, nil, nil, false)
        return s1, e - 1, unpack(caps, 1, n)
      end
      local caps, n = captures(ms, s1, e, true)
      return unpack(caps, 1, n)
    end
    s1 = s1 + 1
  until s1 > ls + 1 or anchor
  return nil
end

local function gmatch_impl(src, pat, init)
  local ls = #src
  init = start_index(init, ls)
  if init > ls + 1 then init = ls + 2 end
  local ms = new_state(src, pat, 1)
  local pos, last = init, nil
  return function()
    while pos <= ls + 1 do
      reset(ms)
      local e = do_match(ms, pos, 1)
      if e ~= nil and e ~= last then
        local start = pos
        pos, last = e, e
        local caps, n = captures(ms, start, e, true)
        return unpack(caps, 1, n)
      end
      pos = pos + 1
    end
    return nil
  end
end

local function add_string(ms, parts, s, e, repl)
  local i, n = 1, #repl
  while i <= n do
    local c = byte(repl, i)
    if c == L_ESC then
      i = i + 1
      local d = byte(repl, i)
      if d == L_ESC then
        parts[#parts + 1] = "%"
      elseif d == 48 then
        parts[#parts + 1] = sub(ms.src, s, e - 1)
      elseif d ~= nil and d >= 49 and d <= 57 then
        parts[#parts + 1] = tostring(get_capture(ms, d - 49, s, e))
      else
        perror("invalid use of '%' in replacement string")
      end
    else
      parts[#parts + 1] = sub(repl, i, i)
    end
    i = i + 1
  end
end

local function gsub_impl(src, pat, repl, max_n)
  local tr = type(repl)
  local ls = #src
  max_n = max_n or ls + 1
  local p = 1
  local anchor = byte(pat, 1) == B_CARET
  if anchor then p = 2 end
  local ms = new_state(src, pat, p)
  local parts, count = {}, 0
  local s, last = 1, nil
  while count < max_n do
    reset(ms)
    local e = do_match(ms, s, p)
    if e ~= nil and e ~= last then
      count = count + 1
      local whole = sub(src, s, e - 1)
      if tr == "string" or tr == "number" then
        add_string(ms, parts, s, e, tostring(repl))
      else
        local value
        if tr == "table" then
          value = repl[get_capture(ms, 0, s, e)]
        else
          local caps, n = captures(ms, s, e, true)
          value = repl(unpack(caps, 1, n))
        end
        if value == nil or value == false then
          parts[#parts + 1] = whole
        elseif type(value) == "string" or type(value) == "number" then
          parts[#parts + 1] = tostring(value)
        else
          perror("invalid replacement value (a " .. type(value) .. ")")
        end
      end
      s, last = e, e
    elseif s <= ls then
      parts[#parts + 1] = sub(src, s, s)
      s = s + 1
    else
      break
    end
    if anchor then break end
  end
  if s <= ls then parts[#parts + 1] = sub(src, s) end
  return table_concat(parts), count
end

local function raise(r)
  local e = r[2]
  if getmetatable(e) == PE then error(e[1], 3) end
  error(e, 0)
end

function M.find(src, pat, init)
  local r = pack(pcall(find_impl, src, pat, init, true))
  if r[1] then return unpack(r, 2, r.n) end
  raise(r)
end

function M.match(src, pat, init)
  local r = pack(pcall(find_impl, src, pat, init, false))
  if r[1] then return unpack(r, 2, r.n) end
  raise(r)
end

function M.gsub(src, pat, repl, max_n)
  local r = pack(pcall(gsub_impl, src, pat, repl, max_n))
  if r[1] then return unpack(r, 2, r.n) end
  raise(r)
end

function M.gmatch(src, pat, init)
  local step = gmatch_impl(src, pat, init)
  return function()
    local r = pack(pcall(step))
    if r[1] then return unpack(r, 2, r.n) end
    local e = r[2]
    if getmetatable(e) == PE then error(e[1], 2) end
    error(e, 0)
  end
end

-- The worst-case bound that decides between C and this port.
local function backtracking_items(pat)
  local k, i, n = 0, 1, #pat
  while i <= n do
    local c = byte(pat, i)
    if c == L_ESC then
      local d = byte(pat, i + 1)
      if d == 98 then k = k + 1; i = i + 4
      elseif d ~= nil and d >= 48 and d <= 57 then k = k + 1; i = i + 2
      else i = i + 2 end
    elseif c == B_OPEN then
      i = i + 1
      if byte(pat, i) == B_CARET then i = i + 1 end
      i = i + 1
      while i <= n and byte(pat, i) ~= B_CLOSE do
        if byte(pat, i) == L_ESC then i = i + 1 end
        i = i + 1
      end
      i = i + 1
    else
      if c == B_STAR or c == B_PLUS or c == B_DASH or c == B_QUESTION then k = k + 1 end
      i = i + 1
    end
  end
  return k
end

function M.costly(src, pat, limit)
  local k = backtracking_items(pat)
  if k == 0 then return false end
  if byte(pat, 1) ~= B_CARET then k = k + 1 end
  local base = #src + 1
  local cost = 1
  for _ = 1, k do
    cost = cost * base
    if cost > limit then return true end
  end
  return false
end

return M
