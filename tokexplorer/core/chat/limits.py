"""The chat template child's CPU-time and memory limits, held by the OS where it has them, and a
guard for memory where it has not.

By platform (`memory_cap`, `cpu_cap`):
- Linux: RLIMIT_CPU and RLIMIT_AS (setrlimit). At the CPU limit the kernel ends the child
  (SIGXCPU); past the memory limit an allocation fails and Python raises MemoryError.
- Windows: no rlimits; the child puts itself in a Job object of its own with a per-process
  user-time limit (JOB_OBJECT_LIMIT_PROCESS_TIME: the system ends the process) and a per-process
  commit limit (JOB_OBJECT_LIMIT_PROCESS_MEMORY: an allocation past it fails, MemoryError), the
  same two bounds, through ctypes.
- macOS: RLIMIT_CPU; its kernel accepts RLIMIT_AS but does not hold it, so memory is the guard's.
- The guard (`wait_for_answer`): the parent, while it waits for the child's answer, reads the
  child's resident memory every GUARD_SECONDS (Linux /proc, macOS proc_pidinfo, Windows
  GetProcessMemoryInfo) and says "memory" once it passes the limit; the caller kills the child.
  It runs wherever the OS does not hold the child's memory (macOS, or a Windows job refused).
  It reads from another process, so it works while the child is inside one long C call; what it
  cannot do is stop a single allocation faster than GUARD_SECONDS (the sandbox bounds those).

No Jinja and no tokenizer here; `core.chat.process` starts the child and words the messages.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time

GUARD_SECONDS = 0.05  # how often the guard reads the child's memory

# Windows (winnt.h): the limit flags and information class used here
JOB_OBJECT_LIMIT_PROCESS_TIME = 0x0002
JOB_OBJECT_LIMIT_PROCESS_MEMORY = 0x0100
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9  # JobObjectExtendedLimitInformation
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
# subtle: documented as the exit status of processes a job's time limit ends (for the per-job
# limit; the per-process one ends the process the same way)
ERROR_NOT_ENOUGH_QUOTA = 1816
PROC_PIDTASKINFO = 4  # macOS <sys/proc_info.h>

# The Windows structures, spelled with fixed-size ctypes so that their 64-bit layout is the same
# (and can be checked) on any 64-bit platform: DWORD is 32 bits, SIZE_T and ULONG_PTR pointer-sized.
_DWORD, _SIZE_T, _LARGE_INTEGER = ctypes.c_uint32, ctypes.c_size_t, ctypes.c_int64


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [("PerProcessUserTimeLimit", _LARGE_INTEGER),  # 100 ns ticks of user time
                ("PerJobUserTimeLimit", _LARGE_INTEGER),
                ("LimitFlags", _DWORD),
                ("MinimumWorkingSetSize", _SIZE_T),
                ("MaximumWorkingSetSize", _SIZE_T),
                ("ActiveProcessLimit", _DWORD),
                ("Affinity", _SIZE_T),  # ULONG_PTR
                ("PriorityClass", _DWORD),
                ("SchedulingClass", _DWORD)]


class IO_COUNTERS(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
                ("IoInfo", IO_COUNTERS),
                ("ProcessMemoryLimit", _SIZE_T),  # bytes of committed memory
                ("JobMemoryLimit", _SIZE_T),
                ("PeakProcessMemoryUsed", _SIZE_T),
                ("PeakJobMemoryUsed", _SIZE_T)]


class PROCESS_MEMORY_COUNTERS_EX(ctypes.Structure):
    _fields_ = [("cb", _DWORD),
                ("PageFaultCount", _DWORD),
                ("PeakWorkingSetSize", _SIZE_T),
                ("WorkingSetSize", _SIZE_T),  # resident
                ("QuotaPeakPagedPoolUsage", _SIZE_T),
                ("QuotaPagedPoolUsage", _SIZE_T),
                ("QuotaPeakNonPagedPoolUsage", _SIZE_T),
                ("QuotaNonPagedPoolUsage", _SIZE_T),
                ("PagefileUsage", _SIZE_T),
                ("PeakPagefileUsage", _SIZE_T),
                ("PrivateUsage", _SIZE_T)]  # committed: what a job's memory limit counts


class proc_taskinfo(ctypes.Structure):  # macOS <sys/proc_info.h>
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "pti_virtual_size", "pti_resident_size", "pti_total_user", "pti_total_system",
        "pti_threads_user", "pti_threads_system")] + [(name, ctypes.c_int32) for name in (
            "pti_policy", "pti_faults", "pti_pageins", "pti_cow_faults", "pti_messages_sent",
            "pti_messages_received", "pti_syscalls_mach", "pti_syscalls_unix", "pti_csw",
            "pti_threadnum", "pti_numrunning", "pti_priority")]


def memory_cap(platform: str = sys.platform) -> str:
    """Who holds the child's memory limit: 'rlimit' (Linux), 'job' (Windows), else 'guard'.

    >>> [memory_cap(p) for p in ("linux", "win32", "darwin")]
    ['rlimit', 'job', 'guard']
    """
    if platform.startswith("linux"):
        return "rlimit"
    return "job" if platform == "win32" else "guard"


def cpu_cap(platform: str = sys.platform) -> str:
    """Who holds the child's CPU-time limit: 'job' on Windows, 'rlimit' elsewhere.

    >>> [cpu_cap(p) for p in ("linux", "win32", "darwin")]
    ['rlimit', 'job', 'rlimit']
    """
    return "job" if platform == "win32" else "rlimit"


def job_limits(user_seconds: float, memory_bytes: int | None) -> JOBOBJECT_EXTENDED_LIMIT_INFORMATION:
    """The Windows job's limits: at most `user_seconds` of user time in all (the process's life so
    far included, as RLIMIT_CPU counts), and `memory_bytes` committed (None: no memory limit)."""
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_PROCESS_TIME
    info.BasicLimitInformation.PerProcessUserTimeLimit = int(user_seconds * 10_000_000)
    if memory_bytes is not None:
        info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY
        info.ProcessMemoryLimit = memory_bytes
    return info


@functools.lru_cache(maxsize=None)
def _kernel32():
    from ctypes import wintypes

    k = ctypes.WinDLL("kernel32", use_last_error=True)
    k.CreateJobObjectW.argtypes, k.CreateJobObjectW.restype = (ctypes.c_void_p, wintypes.LPCWSTR), wintypes.HANDLE
    k.SetInformationJobObject.argtypes = (wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD)
    k.SetInformationJobObject.restype = wintypes.BOOL
    k.AssignProcessToJobObject.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
    k.AssignProcessToJobObject.restype = wintypes.BOOL
    k.GetCurrentProcess.argtypes, k.GetCurrentProcess.restype = (), wintypes.HANDLE
    k.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    k.OpenProcess.restype = wintypes.HANDLE
    k.CloseHandle.argtypes, k.CloseHandle.restype = (wintypes.HANDLE,), wintypes.BOOL
    k.K32GetProcessMemoryInfo.argtypes = (wintypes.HANDLE, ctypes.c_void_p, wintypes.DWORD)
    k.K32GetProcessMemoryInfo.restype = wintypes.BOOL
    return k


@functools.lru_cache(maxsize=None)
def _libsystem():
    return ctypes.CDLL("/usr/lib/libSystem.B.dylib", use_errno=True)


def _windows_counters(k, handle) -> PROCESS_MEMORY_COUNTERS_EX | None:
    counters = PROCESS_MEMORY_COUNTERS_EX()
    counters.cb = ctypes.sizeof(counters)
    if not k.K32GetProcessMemoryInfo(handle, ctypes.byref(counters), counters.cb):
        return None
    return counters


def resident_bytes(pid: int) -> int | None:
    """The resident memory of process `pid` in bytes; None where it cannot be read."""
    try:
        if sys.platform.startswith("linux"):
            with open(f"/proc/{pid}/statm", "rb") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        if sys.platform == "darwin":
            info = proc_taskinfo()
            size = _libsystem().proc_pidinfo(pid, PROC_PIDTASKINFO, ctypes.c_uint64(0), ctypes.byref(info),
                                     ctypes.sizeof(info))
            return info.pti_resident_size if size == ctypes.sizeof(info) else None
        if sys.platform == "win32":
            k = _kernel32()
            handle = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
            if not handle:
                return None
            try:
                counters = _windows_counters(k, handle)
            finally:
                k.CloseHandle(handle)
            return counters.WorkingSetSize if counters is not None else None
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return None


class ChildLimits:
    """The limits a template child sets on itself, anew before each job (see the module's notes).

    With `os_memory` False the OS's memory limit is not set and `holds_memory` is False: the
    parent's guard holds memory instead (what macOS always gets; a test runs it on Linux)."""

    def __init__(self, *, os_memory: bool = True):
        self._job = None
        self._start: int | None = None  # what the memory limit is counted from, in bytes
        cap = memory_cap()
        if cpu_cap() == "job":
            self._job = self._windows_job()
            if self._job is not None and os_memory:
                k, _ = self._job
                counters = _windows_counters(k, k.GetCurrentProcess())
                self._start = counters.PrivateUsage if counters is not None else None
        elif cap == "rlimit" and os_memory:
            self._start = _linux_vm_size()
        self.holds_memory = self._start is not None and cap in ("rlimit", "job")

    @staticmethod
    def _windows_job():
        """(kernel32, job handle) with this process in the job; None when Windows refuses (an
        older Windows whose parent job forbids nesting): then the guard holds memory, and the
        caller's kill at the time limit the time."""
        k = _kernel32()
        job = k.CreateJobObjectW(None, None)
        if not job:
            return None
        # subtle: a job that takes this process but not its limits would hold nothing while
        # `holds_memory` said it does; a first, generous limit proves that it takes them.
        info = job_limits(os.times().user + 3600, None)
        if not (k.AssignProcessToJobObject(job, k.GetCurrentProcess())
                and k.SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
                                              ctypes.byref(info), ctypes.sizeof(info))):
            k.CloseHandle(job)
            return None
        return k, job

    def set(self, seconds: float, memory_mb: int) -> None:
        """At most `seconds` more of CPU time (plus 2 for the rounding) and, where held, `memory_mb`
        more than at the child's start. Soft limits on POSIX (a process may raise them again, up
        to the hard ones); the job's limits replaced on Windows."""
        memory = None if self._start is None else self._start + memory_mb * 1024 * 1024
        if self._job is not None:
            k, job = self._job
            info = job_limits(os.times().user + seconds + 2, memory)
            k.SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, ctypes.byref(info),
                                      ctypes.sizeof(info))
            return
        _set_rlimits(seconds, memory)


def _linux_vm_size() -> int | None:
    """This process's virtual size in bytes (what RLIMIT_AS counts)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _set_rlimits(seconds: float, memory: int | None) -> None:
    try:
        import resource
    except ImportError:
        return
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU's default action dumps core
    except (ValueError, OSError):
        pass
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + seconds) + 2
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, resource.getrlimit(resource.RLIMIT_CPU)[1]))
    except (ValueError, OSError):
        pass
    if memory is not None:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory, resource.getrlimit(resource.RLIMIT_AS)[1]))
        except (ValueError, OSError):  # over the hard limit: the hard limit holds
            pass


def wait_for_answer(conn, pid: int, seconds: float, guard_mb: int | None) -> str:
    """Wait up to `seconds` for the child's answer on `conn`: 'answer', 'time', or, with `guard_mb`,
    'memory' once the child's resident memory passes what it held when the wait began plus
    `guard_mb` MB (then the caller kills it)."""
    base = resident_bytes(pid) if guard_mb is not None else None
    if base is None:
        return "answer" if conn.poll(seconds) else "time"
    limit = base + guard_mb * 1024 * 1024
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if conn.poll(max(0.0, min(GUARD_SECONDS, left))):
            return "answer"
        if left <= GUARD_SECONDS:
            return "time"
        now = resident_bytes(pid)
        if now is not None and now > limit:
            return "memory"
