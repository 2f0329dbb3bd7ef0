#!/usr/bin/python3
"""Runs a program under a container runtime's seccomp profile, without the runtime.

    Benchmarks/seccomp-exec.py [--profile FILE] [--root DIR --user UID] -- PROGRAM [ARGUMENTS...]

The profile is the JSON that buildah and podman apply by default
(/usr/share/containers/seccomp.json, containers-common's); Docker's and
Kubernetes' RuntimeDefault are the same kind of list. Rules are kept as a
process with no capabilities on x86_64 sees them: a rule that needs a
capability is left out, one that applies without it is kept. The program is
exec'd, so it keeps this process's pid, as a server started by a benchmark
must.

It answers one question: what the filter alone costs a program, measured
beside the same program without it (Benchmarks/thumbor-compare.sh with
IMAGO_BASELINE set to a script that execs this one). With --root, the
program runs in that folder (a container image's root, mounted) as user
UID, as a container runtime would run it, but with nothing else of one. Needs Debian's
python3-seccomp (libseccomp's bindings).
"""

import json
import os
import sys

import seccomp

OPERATORS = {
    "SCMP_CMP_NE": seccomp.NE,
    "SCMP_CMP_LT": seccomp.LT,
    "SCMP_CMP_LE": seccomp.LE,
    "SCMP_CMP_EQ": seccomp.EQ,
    "SCMP_CMP_GE": seccomp.GE,
    "SCMP_CMP_GT": seccomp.GT,
    "SCMP_CMP_MASKED_EQ": seccomp.MASKED_EQ,
}


def action(name, errno):
    if name == "SCMP_ACT_ALLOW":
        return seccomp.ALLOW
    if name == "SCMP_ACT_ERRNO":
        return seccomp.ERRNO(errno)
    if name == "SCMP_ACT_KILL" or name == "SCMP_ACT_KILL_THREAD":
        return seccomp.KILL
    raise ValueError(f"unknown seccomp action {name}")


def applies(rule):
    includes = rule.get("includes") or {}
    if includes.get("caps"):
        return False  # needs a capability the process does not have
    arches = includes.get("arches")
    if arches and "amd64" not in arches:
        return False
    return "amd64" not in ((rule.get("excludes") or {}).get("arches") or [])


def load(profile):
    default_errno = profile.get("defaultErrnoRet", 1)
    syscall_filter = seccomp.SyscallFilter(action(profile["defaultAction"], default_errno))
    rules = 0
    for rule in profile["syscalls"]:
        if not applies(rule):
            continue
        rule_action = action(rule["action"], rule.get("errnoRet") or default_errno)
        arguments = [
            seccomp.Arg(argument["index"], OPERATORS[argument["op"]], argument["value"], argument.get("valueTwo", 0))
            if argument["op"] == "SCMP_CMP_MASKED_EQ"
            else seccomp.Arg(argument["index"], OPERATORS[argument["op"]], argument["value"])
            for argument in rule.get("args") or []
        ]
        for name in rule["names"]:
            try:
                syscall_filter.add_rule(rule_action, name, *arguments)
                rules += 1
            except (RuntimeError, ValueError):
                pass  # a name this architecture or libseccomp does not know
    return syscall_filter, rules


def main(arguments):
    profile_path = "/usr/share/containers/seccomp.json"
    root = user = None
    while arguments[:1] in (["--profile"], ["--root"], ["--user"]):
        option, value, arguments = arguments[0], arguments[1], arguments[2:]
        if option == "--profile":
            profile_path = value
        elif option == "--root":
            root = value
        else:
            user = int(value)
    if arguments[:1] == ["--"]:
        arguments = arguments[1:]
    if not arguments:
        sys.exit(__doc__)
    with open(profile_path) as file:
        syscall_filter, rules = load(json.load(file))
    if rules == 0:
        sys.exit(f"{profile_path}: no rule applies to x86_64")
    if root is not None:
        os.chroot(root)
        os.chdir("/")
    if user is not None:
        os.setgroups([])
        os.setgid(user)
        os.setuid(user)
    syscall_filter.load()
    os.execv(arguments[0], arguments)


if __name__ == "__main__":
    main(sys.argv[1:])
