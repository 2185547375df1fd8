#!/usr/bin/python3
"""Checks zephyr/module.yml, the snippets and zephyr/Kconfig of codeplace
the way Zephyr reads them (Zephyr itself cannot run here):
  - module.yml and snippet.yml against pykwalify schemas of Zephyr's
    (tests/zephyr/*-schema.yml) and the paths they name;
  - zephyr/Kconfig parsed and evaluated with kconfiglib over stub symbols
    (tests/zephyr/Kconfig.stub), per board family and snippet.
Prints "ok NAME" / "FAIL NAME: why" per check; exits 1 on a failure."""
import glob
import os
import sys

import kconfiglib
import pykwalify.core
import yaml
import logging

logging.disable(logging.CRITICAL)  # pykwalify logs its own errors
ROOT = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(name, cond, why=""):
    global failed
    if cond:
        print("ok " + name)
    else:
        print("FAIL %s: %s" % (name, why))
        failed = 1


def validate(data, schema_file):
    with open(schema_file) as f:
        schema = yaml.safe_load(f)
    try:
        pykwalify.core.Core(source_data=data, schema_data=schema).validate()
        return ""
    except Exception as e:  # SchemaError and friends
        return str(e)


# module.yml
with open(os.path.join(ROOT, "zephyr/module.yml")) as f:
    meta = yaml.safe_load(f)
err = validate(meta, os.path.join(HERE, "module-schema.yml"))
check("module.yml matches the schema", err == "", err)
build = meta.get("build", {})
check("module.yml build.cmake holds a CMakeLists.txt",
      os.path.isfile(os.path.join(ROOT, build.get("cmake", "zephyr"), "CMakeLists.txt")))
check("module.yml build.kconfig is a file",
      os.path.isfile(os.path.join(ROOT, build.get("kconfig", "zephyr/Kconfig"))))
snroot = build.get("settings", {}).get("snippet_root")
snippets = sorted(glob.glob(os.path.join(ROOT, snroot or "-", "snippets", "**", "snippet.yml"),
                            recursive=True))
check("snippet_root holds the snippets", len(snippets) >= 2, snippets)
for s in meta.get("samples", []):
    check("sample folder %s exists" % s, os.path.isdir(os.path.join(ROOT, s)))
bad = validate({"name": "x", "build": {"cmake": "zephyr", "no-such-key": 1}},
               os.path.join(HERE, "module-schema.yml"))
check("the schema rejects an unknown key", bad != "")

# snippets
names = {}
for path in snippets:
    with open(path) as f:
        sn = yaml.safe_load(f)
    rel = os.path.relpath(path, ROOT)
    err = validate(sn, os.path.join(HERE, "snippet-schema.yml"))
    check("%s matches the schema" % rel, err == "", err)
    names[sn["name"]] = os.path.dirname(path)
    for key, val in sn.get("append", {}).items():
        check("%s: %s %s exists" % (rel, key, val),
              os.path.isfile(os.path.join(os.path.dirname(path), val)))
check("snippets codeplace and codeplace-profiler",
      set(names) == {"codeplace", "codeplace-profiler"}, names)

# Kconfig
os.environ["CODEPLACE_ZEPHYR"] = os.path.join(ROOT, "zephyr")


def kconf(*fragments):
    k = kconfiglib.Kconfig(os.path.join(HERE, "Kconfig.stub"), warn_to_stderr=False)
    first = True
    for frag in fragments:
        if os.path.isfile(frag):
            k.load_config(frag, replace=first)
        else:
            tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cp-kconf-%d.conf" % os.getpid())
            with open(tmp, "w") as f:
                f.write(frag)
            k.load_config(tmp, replace=first)
            os.unlink(tmp)
        first = False
    return k


def v(k, sym):
    return k.syms[sym].str_value


k = kconf("")
check("zephyr/Kconfig parses without warnings", not k.warnings, k.warnings)
place = os.path.join(names.get("codeplace", "-"), "codeplace.conf")
prof = os.path.join(names.get("codeplace-profiler", "-"), "codeplace-profiler.conf")

k = kconf("CONFIG_ARM=y\nCONFIG_CPU_CORTEX_M=y\nCONFIG_SOC_RP2040=y\n", place)
check("codeplace snippet: CODEPLACE=y selects CODE_DATA_RELOCATION(_SRAM)",
      v(k, "CODEPLACE") == "y" and v(k, "CODE_DATA_RELOCATION") == "y"
      and v(k, "CODE_DATA_RELOCATION_SRAM") == "y")
check("CODEPLACE_LIST defaults to codeplace.list", v(k, "CODEPLACE_LIST") == "codeplace.list")
check("CODEPLACE_STRICT defaults to n", v(k, "CODEPLACE_STRICT") == "n")

k = kconf("CONFIG_ARM=y\nCONFIG_SOC_SERIES_IMXRT10XX=y\nCONFIG_CPU_CORTEX_M_HAS_BASEPRI=y\n", prof)
check("profiler snippet on i.MX RT: profiler on, zero-latency IRQs selected",
      v(k, "CODEPLACE_PROFILER") == "y" and v(k, "ZERO_LATENCY_IRQS") == "y"
      and v(k, "SHELL") == "y", (v(k, "CODEPLACE_PROFILER"), v(k, "ZERO_LATENCY_IRQS")))
check("i.MX RT: 10 kHz, PIT channel 3, 2048 buckets",
      (v(k, "CODEPLACE_PROFILER_RATE_HZ"), v(k, "CODEPLACE_PROFILER_PIT_CHANNEL"),
       v(k, "CODEPLACE_PROFILER_BUCKETS")) == ("10000", "3", "2048"))
check("i.MX RT: no RP2040 alarm option", v(k, "CODEPLACE_PROFILER_RP2040_ALARM") == "")

k = kconf("CONFIG_ARM=y\nCONFIG_SOC_RP2040=y\n", prof)
check("profiler snippet on RP2040: on, no BASEPRI so no zero-latency IRQs",
      v(k, "CODEPLACE_PROFILER") == "y" and v(k, "ZERO_LATENCY_IRQS") == "n")
check("RP2040: alarm 3", v(k, "CODEPLACE_PROFILER_RP2040_ALARM") == "3")

k = kconf("CONFIG_ARM=y\nCONFIG_SOC_SERIES_STM32F3X=y\nCONFIG_CPU_CORTEX_M_HAS_BASEPRI=y\n", prof)
check("profiler is not offered on an SoC without a back end",
      v(k, "CODEPLACE_PROFILER") == "n")

k = kconf("CONFIG_ARM=y\nCONFIG_SOC_RP2040=y\nCONFIG_CODEPLACE_PROFILER=y\n")
check("profiler needs the shell", v(k, "CODEPLACE_PROFILER") == "n")

# The udp_echo sample: its Kconfig uses Zephyr's preprocessor functions
# and KERNELVERSION, so it is checked by the real builds (t7301-t7303).
sample = os.path.join(ROOT, "zephyr/samples/udp_echo")
with open(os.path.join(sample, "sample.yaml")) as f:
    sy = yaml.safe_load(f)
check("udp_echo sample.yaml names the four boards",
      set(sy["common"]["platform_allow"]) == {"mps2_an385", "rpi_pico", "teensy41", "stm32f3_disco"})
for b in ("rpi_pico", "teensy41", "stm32f3_disco"):
    check("udp_echo has boards/%s.conf and .overlay" % b,
          all(os.path.isfile(os.path.join(sample, "boards", b + e)) for e in (".conf", ".overlay")))

sys.exit(failed)
