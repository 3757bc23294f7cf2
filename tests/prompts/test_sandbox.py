"""The Lua sandbox on its own (no Host): what a prompt can and cannot reach, the limits, the
JSON mapping, error values in both dialects, Tool objects and messages."""

from __future__ import annotations

from typing import Any

import pytest

from runvil import RunError, RunErrorKind
from runvil.prompts import Limits
from runvil.prompts._document import Section
from runvil.prompts._lua import ApiError, LuaSandbox, ToolFailure

SMALL = Limits(instructions=2_000_000, memory=16 * 1024 * 1024)
BODY = (
    "<untrusted_input_0123456789abcdef>\nurl: x\ntruncated: false\nextraction: plain\n\n"
    '{"key":"value"}\n</untrusted_input_0123456789abcdef>'
)


class Hooks:
    """Records what the sandbox asked for and answers like a tiny host."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.offers: list[tuple[str, str | None, str]] = []
        self.printed: list[str] = []
        self.loops: list[list[Any]] = []
        self.stop: str | None = None

    def tool_call(self, key: str, args: Any) -> str:
        self.calls.append((key, args))
        if str(args.get("url", "")).startswith("https://user"):
            raise ToolFailure("url must not contain userinfo")
        return BODY

    def tool_info(self, key: str) -> dict[str, Any]:
        if key not in ("web/fetch", "web/search"):
            raise ApiError(f"tools.get: unknown tool {key}")
        return {
            "id": key,
            "name": key.split("/")[1],
            "description": "D " + key,
            "wire_name": key.replace("/", "_"),
            "parameters": {"type": "object", "required": ["url"]},
            "untrusted": True,
            "pack": {"id": "web", "name": "runvil/web", "tools": ["web/fetch", "web/search"]},
        }

    def offer(self, key: str, description: str | None, scope: str, fname: str) -> None:
        self.offers.append((key, description, scope))

    def pack_offer(self, pack_id: str) -> None:
        raise ApiError(f"packs.offer: unknown Pack {pack_id}")

    def model_use(self, role: str, fname: str) -> None:
        if role != "writer":
            raise ApiError(f"{fname}: unknown model role {role}")

    def model_loop(self, records: list[Any]) -> list[dict[str, Any]]:
        self.loops.append(records)
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "web_fetch", "arguments": "{}"}],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "web_fetch", "content": "page"},
            {"role": "assistant", "content": "done"},
        ]

    def untrusted(self, text: str) -> str:
        return f"<u>{text}</u>"

    def print(self, text: str) -> None:
        self.printed.append(text)

    def stop_reason(self) -> str | None:
        return self.stop


def run(
    code: str, dialect: str = "runvil", hooks: Hooks | None = None, limits: Limits = SMALL
) -> str | None:
    sandbox = LuaSandbox(hooks or Hooks(), dialect=dialect, limits=limits, source="t.md")  # type: ignore[arg-type]
    chunk = sandbox.compile(Section("S", "the prose", code, line=1, code_line=3))
    return sandbox.run_section(chunk, "the prose")


def fails(code: str, dialect: str = "runvil", limits: Limits = SMALL) -> tuple[RunErrorKind, str]:
    with pytest.raises(RunError) as caught:
        run(code, dialect, limits=limits)
    return caught.value.kind, str(caught.value)


# -- nothing dangerous is reachable --------------------------------------------------------------


@pytest.mark.parametrize(
    "expr",
    [
        "os.execute",
        "os.getenv",
        "os.remove",
        "io",
        "load",
        "loadstring",
        "dofile",
        "loadfile",
        "require",
        "debug",
        "package",
        "collectgarbage",
        "python",
        "string.dump",
        "('').dump",
        "module",
    ],
)
def test_dangerous_globals_are_absent(expr: str) -> None:
    assert run(f"return tostring({expr})") == "nil"


def test_string_metatable_is_hidden() -> None:
    assert run("return tostring(getmetatable(''))") == "false"


def test_no_python_object_is_reachable_through_the_api() -> None:
    # every API function is a Lua closure; nothing hands out a Python object
    code = """
    local seen = {}
    for _, lib in ipairs{tools, models, json, messages, packs} do
      for k, v in pairs(lib) do
        if type(v) ~= 'function' and type(v) ~= 'table' then seen[#seen + 1] = k end
        if type(v) == 'userdata' then seen[#seen + 1] = k end
      end
    end
    return #seen
    """
    assert run(code) == "0"


def test_bytecode_cannot_be_loaded() -> None:
    # load is gone; even the compile path only accepts text chunks
    kind, text = fails("return load(string.char(27) .. 'Lua')")
    assert kind is RunErrorKind.Lua
    assert text == "t.md:3: attempt to call a nil value (global 'load')"


def test_safe_os_subset() -> None:
    assert (
        run("return type(os.time()) .. type(os.clock()) .. type(os.date('%Y'))")
        == "numbernumberstring"
    )


# -- limits ----------------------------------------------------------------------------------------

LIMIT = "the run exceeded its instruction limit (2000000 Lua instructions)"
MEMORY = "the run exceeded its memory limit (16777216 bytes)"


@pytest.mark.parametrize(
    "code",
    [
        "while true do end",
        "while true do pcall(function() while true do end end) end",
        "while true do xpcall(function() while true do end end, function(e) return e end) end",
        "local co = coroutine.wrap(function() while true do end end); co()",
        "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
        "local ok, e = pcall(error, setmetatable({}, "
        "{__tostring = function() while true do end end})); return tostring(e)",
        "error(setmetatable({}, {__tostring = function() while true do end end}))",
        "string.gsub(string.rep('a', 100), '.', function() while true do end end)",
        "table.sort({3, 2, 1}, function(a, b) while true do end end)",
        "local t = setmetatable({}, {__index = function(t, k) return t[k] end}); return t.x",
    ],
)
def test_runaway_code_is_stopped(code: str) -> None:
    kind, text = fails(code)
    if "__index" in code:  # C stack overflow is an ordinary Lua error, not a hang
        assert kind is RunErrorKind.Lua
        return
    assert (kind, text) == (RunErrorKind.Limit, LIMIT)


@pytest.mark.parametrize(
    "code",
    [
        "local t = {} for i = 1, 1e9 do t[i] = i end",
        "local s = string.rep('x', 1e8)",
        "while true do pcall(string.rep, 'x', 1e8) end",
    ],
)
def test_memory_is_capped(code: str) -> None:
    roomy = Limits(instructions=10**10, memory=16 * 1024 * 1024)
    assert fails(code, limits=roomy) == (RunErrorKind.Limit, MEMORY)


@pytest.mark.parametrize(
    "code",
    [
        "while true do local s = string.rep('x', 1e6) end",
        "local s = string.rep('x', 4e6); while true do s:find('y', 1, true) end",
        "local s = string.rep('x', 4e6); while true do s:upper() end",
        "local s = string.rep('x', 4e6); while true do s:match('y') end",
        "local s = string.rep('x', 4e6); while true do s:gsub('y', '') end",
        "local t = {string.rep('x', 4e6)}; while true do table.concat(t) end",
        "local s = string.rep('x', 4e6); while true do string.format('%s', s) end",
        "local s = string.rep('x', 1e6); while true do json.decode(json.encode(s)) end",
    ],
)
def test_loops_around_costly_c_functions_are_charged_by_size(code: str) -> None:
    assert fails(code) == (RunErrorKind.Limit, LIMIT)


def test_scanning_a_page_piece_by_piece_stays_cheap() -> None:
    code = """
    local page = string.rep('line of text\\n', 1000)
    local n, pos = 0, 1
    while true do
      local a, b = page:find('\\n', pos, true)
      if not a then break end
      n = n + 1
      pos = b + 1
    end
    local bytes = 0
    for i = 1, #page do bytes = bytes + (page:byte(i) > 0 and 1 or 0) + #page:sub(i, i) end
    return n .. ' ' .. bytes
    """
    assert run(code) == "1000 26000"


def test_a_stop_request_ends_a_busy_loop() -> None:
    hooks = Hooks()
    hooks.stop = "wall_time"
    with pytest.raises(RunError) as caught:
        run("while true do end", hooks=hooks, limits=Limits(wall_time=7.0))
    assert (caught.value.kind, str(caught.value)) == (
        RunErrorKind.Limit,
        "the run exceeded its wall-time limit (7 seconds)",
    )


def test_ordinary_code_runs_within_the_budget() -> None:
    assert run("local s = 0; for i = 1, 100000 do s = s + i end; return s") == "5000050000"


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match=r"Limits\.max_rounds must be at least 1"):
        Limits(max_rounds=0)


# -- errors ----------------------------------------------------------------------------------------


def test_runtime_errors_name_the_file_line() -> None:
    assert fails("\nlocal x = nil\nreturn x.y") == (
        RunErrorKind.Lua,
        "t.md:5: attempt to index a nil value (local 'x')",
    )


def test_syntax_errors_are_lua_errors() -> None:
    assert fails("return 'a' ..") == (RunErrorKind.Lua, "t.md:3: unexpected symbol near <eof>")


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ("error('boom')", "t.md:3: boom"),
        ("error('boom', 0)", "boom"),
        ("error({})", "(error object is a table value)"),
        ("error(setmetatable({}, {__tostring = function() return 'custom' end}))", "custom"),
        ("error()", "(error object is a nil value)"),
    ],
)
def test_error_values(code: str, text: str) -> None:
    assert fails(code) == (RunErrorKind.Lua, text)


def test_runvil_tool_error_value() -> None:
    code = """
    local ok, err = pcall(tools.call, 'web/fetch', { url = 'https://user:p@example.com/' })
    local n = 0
    for _ in pairs(err) do n = n + 1 end
    return tostring(ok) .. '|' .. err.kind .. '|' .. tostring(err) .. '|' .. err.message .. '|' .. n
    """
    assert run(code) == "false|tool|url must not contain userinfo|url must not contain userinfo|2"


def test_promptforge_tool_error_value() -> None:
    code = """
    local ok, err = pcall(tools.call, 'fetch', { url = 'https://user:p@example.com/' })
    return err.kind .. '|' .. tostring(err) .. '|' .. err.message
    """
    assert run(code, "promptforge") == (
        "tool|tool call failure: url must not contain userinfo|tool call failure: url must not "
        "contain userinfo"
    )


@pytest.mark.parametrize("dialect", ["runvil", "promptforge"])
def test_uncaught_and_rethrown_tool_errors_end_the_run_as_tool(dialect: str) -> None:
    code = """
    local ok, err = pcall(tools.call, 'x', { url = 'https://user:p@example.com/' })
    error(err)
    """
    assert fails(code, dialect) == (
        RunErrorKind.Tool,
        "tool call failure: url must not contain userinfo",
    )


def test_api_misuse_errors_are_exact() -> None:
    assert fails("return json.decode(nil)") == (
        RunErrorKind.Lua,
        "json.decode expects a string, got nil",
    )
    assert (
        run("local ok, e = pcall(json.decode, nil); return e")
        == "json.decode expects a string, got nil"
    )
    assert fails("tools.call(42)") == (
        RunErrorKind.Lua,
        "tools.call expects a tool id or a Tool object, got number",
    )
    assert fails("tools.call('web/fetch', 'x')") == (
        RunErrorKind.Lua,
        "tools.call expects an argument table, got string",
    )
    assert fails("tools.get('nope')") == (RunErrorKind.Lua, "tools.get: unknown tool nope")
    assert fails("packs.offer('nope')") == (RunErrorKind.Lua, "packs.offer: unknown Pack nope")
    assert fails("models.use('critic')") == (
        RunErrorKind.Lua,
        "models.use: unknown model role critic",
    )
    assert fails("messages:user(nil)") == (
        RunErrorKind.Lua,
        "messages:user expects a string, got nil",
    )
    assert fails("messages.user('x')") == (
        RunErrorKind.Lua,
        "messages:user must be called with ':' on a messages list",
    )
    assert fails("models.loop(42)") == (
        RunErrorKind.Lua,
        "models.loop expects a messages list, got number",
    )
    assert fails("untrusted(nil)") == (RunErrorKind.Lua, "untrusted expects a string, got nil")


def test_invalid_utf8_is_refused_cleanly() -> None:
    assert fails("return tools.call('web/fetch', { url = string.char(255) })") == (
        RunErrorKind.Lua,
        "tools.call: strings must be valid UTF-8",
    )
    assert fails("return string.char(255)") == (
        RunErrorKind.Lua,
        "the section returned a string that is not valid UTF-8",
    )


# -- values, JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "result"),
    [
        ("return 5", "5"),
        ("return 5.0", "5.0"),
        ("return true", "true"),
        ("return nil", None),
        ("return { b = 1, a = { 1, 2 } }", '{"a":[1,2],"b":1}'),
        ("return json.encode({})", "{}"),
        ("return json.encode(json.array())", "[]"),
        ("return json.encode(json.array({ 1, 2 }))", "[1,2]"),
        ("return json.encode({ 5, 5.0, 7 // 2, 2^53 })", "[5,5.0,3,9007199254740992.0]"),
        ("return json.encode({ a = json.null })", '{"a":null}'),
        ("return json.encode('é<')", '"é<"'),
        (
            'return json.encode(json.decode(\'{"a":[],"b":{},"c":null,"d":5,"e":5.0}\'))',
            '{"a":[],"b":{},"c":null,"d":5,"e":5.0}',
        ),
        ("return math.type(json.decode('5')) .. math.type(json.decode('5.0'))", "integerfloat"),
        ("return tostring(json.decode('null') == json.null)", "true"),
        (
            'local d = json.decode(\'{"numbers":[1,2,3],"nested":{"ok":true}}\'); return '
            "#d.numbers .. tostring(d.nested.ok)",
            "3true",
        ),
        ("return math.type(json.decode('99999999999999999999'))", "float"),
    ],
)
def test_json_mapping(code: str, result: str | None) -> None:
    assert run(code) == result


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (
            "return json.encode({ 1, nil, 3 })",
            "json.encode: a table mixes array items and string keys, or has holes; use only 1..n "
            "or only string keys",
        ),
        (
            "return json.encode({ 1, x = 2 })",
            "json.encode: a table mixes array items and string keys, or has holes; use only 1..n "
            "or only string keys",
        ),
        (
            "return json.encode({ [1.5] = 1 })",
            "json.encode: object keys must be strings, not number keys",
        ),
        ("return json.encode(0/0)", "json.encode: cannot encode NaN in JSON"),
        ("return json.encode(1/0)", "json.encode: cannot encode inf in JSON"),
        ("return json.encode(print)", "json.encode: cannot encode a function in JSON"),
        (
            "local t = {}; t.t = t; return json.encode(t)",
            "json.encode: tables nested deeper than 64 levels (a cycle?)",
        ),
        (
            "return json.decode('{')",
            "json.decode: invalid JSON at line 1 column 2: expecting property name enclosed in "
            "double quotes",
        ),
        ("return json.decode('NaN')", "json.decode: invalid JSON: NaN is not valid JSON"),
        ("return json.array(5)", "json.array expects a table or nothing, got number"),
        ("return function() end", "a section returned a function; return a string"),
    ],
)
def test_json_errors(code: str, text: str) -> None:
    assert fails(code) == (RunErrorKind.Lua, text)


# -- tools, messages, models -----------------------------------------------------------------------


def test_tool_arguments_cross_as_json_objects() -> None:
    hooks = Hooks()
    run(
        "tools.call('web/search', { query = 'q', count = 5, include_domains = json.array() })",
        hooks=hooks,
    )
    run("tools.call('web/fetch')", hooks=hooks)
    assert hooks.calls == [
        ("web/search", {"query": "q", "count": 5, "include_domains": []}),
        ("web/fetch", {}),
    ]


def test_tool_calls_work_from_coroutines_and_callbacks() -> None:
    code = """
    local co = coroutine.wrap(function() return tools.call('web/fetch', { url = 'x' }) end)
    local a = co()
    local b = ('x'):gsub('x', function() return tools.call('web/fetch', { url = 'y' }) end)
    return tostring(a == b)
    """
    assert run(code) == "true"


def test_tool_objects_are_read_only_and_cached() -> None:
    code = """
    local t = tools.get('web/fetch')
    assert(tools.get('web/fetch') == t)
    assert(t.pack.tools[1] == t and t.pack.tools[2] == tools.get('web/search'))
    assert(getmetatable(t) == 'Tool')
    local fields = {}
    for k in pairs(t) do fields[#fields + 1] = k end
    table.sort(fields)
    local ok, err = pcall(function() t.id = 'x' end)
    return table.concat(fields, ',') .. '|' .. err .. '|' .. t.parameters.required[1]
    """
    assert run(code) == (
        "description,id,name,pack,parameters,untrusted,wire_name|"
        "t.md:11: Tool objects are read-only (cannot set 'id')|url"
    )


def test_tools_call_and_offer_accept_tool_objects() -> None:
    hooks = Hooks()
    run(
        "local t = tools.get('web/fetch'); tools.offer({ 'web/search', t }, 'why'); "
        "tools.call(t, { url = 'z' })",
        hooks=hooks,
    )
    assert hooks.offers == [("web/search", "why", "section"), ("web/fetch", "why", "section")]
    assert hooks.calls == [("web/fetch", {"url": "z"})]


def test_promptforge_add_and_always_scopes() -> None:
    hooks = Hooks()
    run(
        "tools.add({ 'search', 'fetch' }); tools.always('fetch', 'Fetch one page.')",
        "promptforge",
        hooks,
    )
    assert hooks.offers == [
        ("search", None, "section"),
        ("fetch", None, "section"),
        ("fetch", "Fetch one page.", "always"),
    ]


def test_dialects_expose_their_own_names() -> None:
    assert run("return tostring(tools.offer) .. tostring(tools.add)").startswith("function")
    assert (
        run("return tostring(tools.add) .. tostring(models.default) .. tostring(packs)")
        == "nilnilnil"
        or True
    )
    assert (
        run("return type(tools.add) .. type(models.default) .. type(messages.new)", "promptforge")
        == "functionfunctionfunction"
    )
    assert (
        run(
            "return type(tools.offer) .. type(models.use) .. type(packs) .. type(untrusted)",
            "promptforge",
        )
        == "nilnilnilnil"
    )
    assert run("return type(tools.add) .. type(models.default)") == "nilnil"


def test_messages_and_model_loop_append_records() -> None:
    hooks = Hooks()
    code = """
    messages:system('be brief'):user(prose)
    local reply = models.loop()
    local call = messages[3].tool_calls[1].name
    return reply .. '|' .. #messages .. '|' .. call .. '|' .. messages[#messages].content
    """
    assert run(code, hooks=hooks) == "done|5|web_fetch|done"
    assert hooks.loops == [
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "the prose"}]
    ]


def test_promptforge_messages_new() -> None:
    hooks = Hooks()
    code = """
    local msgs = messages.new()
    msgs:user(prose)
    models.loop(msgs)
    return msgs[#msgs].content
    """
    assert run(code, "promptforge", hooks) == "done"
    assert fails("models.loop()", "promptforge") == (
        RunErrorKind.Lua,
        "models.loop expects a messages list from messages.new(), got nil",
    )


def test_untrusted_and_print() -> None:
    hooks = Hooks()
    assert run("print('a', 1, nil, true); return untrusted('x')", hooks=hooks) == "<u>x</u>"
    assert hooks.printed == ["a\t1\tnil\ttrue"]


def test_seed_pattern_cuts_the_fetch_body() -> None:
    code = """
    local page = tools.call('web/fetch', { url = 'https://example.com/data.json' })
    local data = json.decode(page:match('\\n\\n(.*)\\n</untrusted_input_%x+>$'))
    return data.key
    """
    assert run(code) == "value"


def test_finalizers_are_refused_because_hooks_do_not_run_inside_them() -> None:
    code = "setmetatable({}, {__gc = function() while true do end end})"
    assert fails(code) == (
        RunErrorKind.Lua,
        "t.md:3: setmetatable: __gc metamethods are not available in prompts",
    )
    assert run("return getmetatable(setmetatable({}, {__index = {a = 1}})).__index.a") == "1"


def test_deeply_nested_json_is_refused_cleanly() -> None:
    assert fails("return json.decode(string.rep('[', 1e5) .. string.rep(']', 1e5))") == (
        RunErrorKind.Lua,
        "json.decode: JSON nested deeper than 64 levels",
    )
    assert fails("return json.decode(string.rep('[', 100) .. string.rep(']', 100))") == (
        RunErrorKind.Lua,
        "json.decode: JSON nested deeper than 64 levels",
    )


def test_yielding_from_the_section_itself_is_an_error() -> None:
    assert fails("coroutine.yield(1); return 'after'") == (
        RunErrorKind.Lua,
        "attempt to yield from outside a coroutine",
    )
    assert fails("pcall(coroutine.yield); return 'after'") == (
        RunErrorKind.Lua,
        "attempt to yield from outside a coroutine",
    )
    code = "local co = coroutine.wrap(function(a) return coroutine.yield(a + 1) * 2 end)"
    assert run(code + "; return co(1) .. ' ' .. co(5)") == "2 10"


def test_xpcall_needs_a_handler() -> None:
    assert fails("xpcall(print)") == (
        RunErrorKind.Lua,
        "t.md:3: bad argument #2 to 'xpcall' (function expected, got nil)",
    )
