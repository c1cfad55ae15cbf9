"""Standard-library calls Dynamo does not trace, for HPU012: a table measured on real Dynamo.

How it was measured (torch 2.13, CPU, ``backend="eager"``, Python 3.11): each call was put in a
tiny function ``def f(x): y = x + 1; v = CALL; return y * 2, v``, run once eagerly, compiled,
called twice, and its graph breaks counted with ``torch._dynamo.utils.counters["graph_break"]``
(the reason quoted below is the one Dynamo logs); a second run of the same functions, written to a
file, with ``TORCH_LOGS=graph_breaks``, gave the line of each break ("Graph break in user code at
FILE:LINE"). About 360 calls of 60 modules (and builtins) were tried. Three outcomes:

- ``AT_CALL``: a C builtin (or a C class, or a method of one) Dynamo has no handler for
  ("Attempted to call function marked as skipped", "Unsupported method call", "Unsupported
  function call"): the graph breaks at the call's own line;
- ``INSIDE``: a Python function of the standard library whose code calls such a builtin
  (``os.path.exists`` calls ``posix.stat``, ``uuid.uuid4`` calls ``posix.urandom``,
  ``subprocess.run`` allocates a lock, ``json.dumps`` makes an encoder object): Dynamo inlines
  it and breaks inside it (2.13 resumes in the nested frame, so its log names the library's line,
  not the caller's), which still splits the compiled function's graph at the call;
- ``TRACED`` (no break, kept for reference and for the tests that keep the table honest):
  ``math``, ``operator``, ``itertools``, ``functools.reduce``/``partial``, ``collections``,
  ``re``, ``string``, ``textwrap``, ``struct.pack``/``unpack``, ``os.getenv``/``os.environ``,
  ``os.path.join``/``basename``/``dirname``/``splitext``/``split``/``isabs``/``expanduser``,
  ``platform.system``/``node``/``machine``... (their ``uname`` is cached at import),
  ``tempfile.gettempdir``, ``sys.getrecursionlimit``/``exc_info``/``intern``, ``traceback.format_exc``,
  ``statistics.median``/``fmean``, ``fractions.Fraction``, ``uuid.UUID``, ``subprocess.list2cmdline``,
  ``json.JSONEncoder()``, ``copy.deepcopy`` of a list, ``hash``/``id``/``repr`` of numbers.

``MODULES``: C-extension modules every measured call of which broke at its line (``socket``:
``gethostname``, ``gethostbyname``, ``htons``, ``socket()``...; ``resource``: ``getrusage``,
``getrlimit``, ``getpagesize``; ``secrets``, ``select``, ``pwd``, ``grp``, ``marshal``,
``atexit``; ``unicodedata``: ``normalize``, ``category``, ``name``, ``east_asian_width``,
``combining``, measured in round 26); any call of theirs is reported.

Not here because another module reports them with their own message (unchanged): the clocks
(``time.time``, ``perf_counter``, ``monotonic``...: hpu012's ``CLOCKS``), ``random`` draws and
``random.seed`` (hpu012, compile_untraced), ``gc.collect``/``disable``/``enable``/``isenabled``
(compile_unsupported), ``pickle`` (compile_skipped), ``hashlib``/``zlib.crc32`` (compile_host_calls),
``bisect``/``heapq.heappush``... and ``open`` (compile_library_calls), ``sys._getframe``/
``inspect.currentframe``/``inspect.stack`` (compile_builtin_calls), ``threading.Lock``
(compile_unsupported), ``warnings`` and ``logging`` calls (compile_untraced, compile_printing).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from hpulint.analysis.syntax import descendants


def _names(module: str, names: str) -> frozenset:
    return frozenset(f"{module}.{n}" for n in names.split())


SKIPPED = "a C builtin: \"Attempted to call function marked as skipped\""
METHOD = "a C method: \"Unsupported method call\""
CLASS = "a C class: \"Unsupported function call\""
# the graph breaks at the call's line (measured: "Graph break in user code at" that line)
AT_CALL = {
    **dict.fromkeys(_names("os", "getpid getppid cpu_count getcwd listdir scandir stat lstat access urandom getrandom "
                                 "uname times getloadavg sched_getaffinity getuid getgid geteuid getegid getpgid nice "
                                 "sysconf strerror"), SKIPPED),
    **dict.fromkeys(_names("sys", "getsizeof getrefcount getdefaultencoding is_finalizing getswitchinterval gettrace "
                                  "getallocatedblocks setrecursionlimit"), SKIPPED),
    **dict.fromkeys(_names("sys", "stdout.write stdout.flush stderr.write stderr.flush"), METHOD),
    **dict.fromkeys(_names("time", "sleep strftime localtime gmtime asctime ctime mktime clock_gettime "
                                   "get_clock_info"), SKIPPED),
    **dict.fromkeys(_names("datetime", "datetime.now datetime.utcnow datetime.today datetime.fromtimestamp "
                                       "datetime.strptime datetime.fromisoformat date.today date.fromtimestamp"),
                    METHOD),
    **dict.fromkeys(_names("datetime", "datetime date timedelta"), CLASS),
    **dict.fromkeys(_names("struct", "calcsize iter_unpack"), SKIPPED),
    "struct.Struct": CLASS,
    **dict.fromkeys(_names("gc", "get_count get_stats get_threshold freeze"), SKIPPED),
    **dict.fromkeys(_names("threading", "get_ident get_native_id"), SKIPPED),
    "threading.local": CLASS,
    "random.getstate": SKIPPED,
    "functools.cmp_to_key": SKIPPED,
    "binascii.hexlify": SKIPPED,
    "zlib.compress": SKIPPED,
    "zlib.decompress": SKIPPED,
    "decimal.Decimal": CLASS,
    "decimal.getcontext": SKIPPED,
    "array.array": CLASS,
    "importlib.import_module": SKIPPED,
    "unicodedata.category": SKIPPED,
    "inspect.getfile": SKIPPED,
    "sqlite3.connect": SKIPPED,
    "ctypes.sizeof": SKIPPED,
    # (`with contextlib.redirect_stdout(io.StringIO()):` in the region: measured, the whole function
    # then runs eagerly, 0 graphs)
    **dict.fromkeys(_names("contextlib", "redirect_stdout redirect_stderr"),
                    "an unsupported contextlib API: \"unsupported contextlib.* API\""),
}
# the graph breaks inside the library's Python code, where it calls a C builtin (in brackets)
INSIDE = {
    **dict.fromkeys(_names("os.path", "exists isfile isdir lexists islink getsize getmtime samefile"), "posix.stat"),
    **dict.fromkeys(_names("os.path", "abspath realpath normpath relpath"), "posix.getcwd, posix._path_normpath"),
    "os.makedirs": "posix.stat", "os.walk": "sys.audit", "os.get_exec_path": "warnings",
    **dict.fromkeys(_names("uuid", "uuid1 uuid3 uuid4 uuid5"), "posix.urandom, int.to_bytes"),
    **dict.fromkeys(_names("json", "dumps loads dump load"), "its encoder and decoder objects"),
    "getpass.getuser": "posix.getuid",
    **dict.fromkeys(_names("threading", "current_thread active_count enumerate Event Thread"),
                    "_thread.get_ident, an RLock"),
    **dict.fromkeys(_names("subprocess", "run call check_call check_output getoutput Popen"), "_thread.allocate_lock"),
    **dict.fromkeys(_names("shutil", "disk_usage which get_terminal_size copy rmtree"), "posix.stat, posix.statvfs"),
    **dict.fromkeys(_names("glob", "glob iglob"), "sys.audit"),
    **dict.fromkeys(_names("tempfile", "mkdtemp mkstemp NamedTemporaryFile TemporaryDirectory"), "posix.getpid, open"),
    **dict.fromkeys(_names("traceback", "format_stack extract_stack print_stack"), "sys._getframe"),
    **dict.fromkeys(_names("statistics", "mean stdev"), "itertools.groupby of a list"),
    **dict.fromkeys(_names("locale", "getpreferredencoding getlocale"), "_locale.setlocale"),
    "sysconfig.get_platform": "posix.uname", "platform.architecture": "_struct.calcsize",
    "platform.libc_ver": "posix.confstr", "signal.getsignal": "_signal.getsignal", "fnmatch.fnmatch": "object()",
    **dict.fromkeys(_names("base64", "b64encode b64decode urlsafe_b64encode"), "binascii"),
    "multiprocessing.cpu_count": "posix.cpu_count", "gettext.gettext": "list.append",
    "pprint.pformat": "a C class", "shlex.split": "a C class", "csv.writer": "a C class",
    **dict.fromkeys(_names("heapq", "nlargest nsmallest"), "_heapq.heapify"),
    "logging.getLogger": "its logger cache",
}
# measured breaks that are not reported: `io.StringIO()`/`io.BytesIO()` (Dynamo's polyfill of `type.__new__`; the
# buffer is made for `torch.save`/`pickle`, reported on its own line: one finding per save), `copy.copy` of a list
# (`list.copy`), `inspect.signature`/`getfullargspec` of a builtin (of a Python function they are traced)
NOT_REPORTED = frozenset({"io.StringIO", "io.BytesIO", "copy.copy", "inspect.signature", "inspect.getfullargspec"})
# C-extension modules every measured call of which broke at its line
MODULES = frozenset({"socket", "resource", "secrets", "select", "pwd", "grp", "marshal", "atexit", "unicodedata"})
# measured: traced, no break (for reference and the tests; not used to report)
TRACED = frozenset({
    "platform.node", "platform.system", "platform.machine", "platform.python_version", "platform.platform",
    "platform.processor", "platform.uname", "platform.release", "os.getenv", "os.environ.get", "os.path.join",
    "os.path.basename", "os.path.dirname", "os.path.splitext", "os.path.split", "os.path.isabs",
    "os.path.expanduser", "os.path.expandvars", "os.fspath", "sys.getrecursionlimit", "sys.exc_info",
    "sys.intern", "tempfile.gettempdir", "traceback.format_exc", "struct.pack", "struct.unpack",
    "statistics.median", "statistics.fmean", "fractions.Fraction", "uuid.UUID", "subprocess.list2cmdline",
    "json.JSONEncoder", "copy.deepcopy", "re.sub", "re.match", "re.compile", "re.findall", "re.split",
    "re.fullmatch", "re.escape", "math.sqrt", "math.log", "math.floor", "math.ceil", "math.isclose", "math.prod",
    "math.gcd", "math.factorial", "math.comb", "math.fsum", "math.isqrt", "operator.add", "operator.itemgetter",
    "operator.attrgetter", "itertools.chain", "itertools.product", "itertools.accumulate",
    "itertools.combinations", "itertools.permutations", "itertools.islice", "itertools.zip_longest",
    "itertools.groupby", "functools.reduce", "functools.partial", "functools.lru_cache", "functools.wraps",
    "collections.Counter", "collections.OrderedDict", "collections.defaultdict", "collections.deque",
    "collections.namedtuple", "textwrap.dedent", "textwrap.shorten", "string.capwords", "calendar.isleap",
    "keyword.iskeyword", "difflib.SequenceMatcher", "shlex.quote", "weakref.ref", "contextlib.nullcontext",
    "contextlib.suppress", "dataclasses.is_dataclass", "typing.cast", "typing.get_type_hints", "enum.Enum",
    "glob.escape", "inspect.isfunction", "inspect.isclass", "inspect.getmodule", "inspect.getmembers",
    "importlib.util.find_spec", "threading.main_thread", "random.Random", "weakref.WeakValueDictionary",
})
WHY_AT = "Dynamo does not trace `{name}()` ({kind})"
WHY_INSIDE = ("Dynamo does not trace all of `{name}()` (its Python code calls {inner}, which Dynamo has no handler "
              "for; the break is logged inside the library)")
FIX_STDLIB = ("Call it in the eager code around the compiled function (once at start-up, or per step before the "
              "call) and pass the result in (a number that changes per call as a tensor), or keep it out of the "
              "compiled code")


def stdlib_call(an, node: cst.Call) -> Optional[tuple]:
    """(what is said, why, fix, check) for a call in the tables above, or None."""
    qn = an.qualname(node.func) or ""
    if "." not in qn:
        return None
    kind = AT_CALL.get(qn)
    if kind is None and qn.split(".", 1)[0] in MODULES:
        kind = SKIPPED
    inner = INSIDE.get(qn) if kind is None else None
    if (kind is None and inner is None) or _after_open_with(an, node):
        return None
    why = WHY_AT.format(name=qn, kind=kind) if kind is not None else WHY_INSIDE.format(name=qn, inner=inner)
    return f"`{qn}(...)`", why, FIX_STDLIB, lambda: True


def _after_open_with(an, node: cst.Call) -> bool:
    """After a `with open(...)` of the function (in source order, its block included): Dynamo breaks at
    the `open`, does not resume in a `with` block, and runs the rest of the function eagerly
    (measured: a `json.dumps` in the block or after it is no break of its own)."""
    fn = an.function.node
    if type(fn) is not cst.FunctionDef:
        return False
    for n in descendants(fn.body):
        if n is node:
            return False
        if type(n) is cst.With and any(type(i.item) is cst.Call and type(i.item.func) is cst.Name
                                       and i.item.func.value == "open" for i in n.items):
            return True
    return False
