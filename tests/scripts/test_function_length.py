"""scripts/check_function_length.py, the function-length rule of scripts/lint --python."""

import subprocess
import sys

import check_function_length as cfl


def _function(name: str, body_lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines - 1))
    return f"{indent}def {name}():\n{body}{indent}    return 0\n"


def test_an_over_long_function_fails_and_is_named(tmp_path, repo):
    source = tmp_path / "planted.py"
    # 1 line of def and 81 of body: 82 lines from the def to its last line.
    source.write_text("import os\n\n\n" + _function("short", 10) + "\n\n" + _function("long_one", 81))
    p = subprocess.run([sys.executable, str(repo / "scripts" / "check_function_length.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert p.stdout.splitlines() == [f"{source}:17 long_one 82"]
    assert "1 function(s) over 80 lines" in p.stderr and "Traceback" not in p.stderr


def test_short_functions_pass(tmp_path):
    (tmp_path / "ok.py").write_text(_function("exactly_eighty", 79) + "\n\nclass C:\n" + _function("m", 40, "    "))
    assert cfl.main([str(tmp_path)]) == 0


def test_methods_and_nested_functions_count_on_their_own(tmp_path, capsys):
    (tmp_path / "c.py").write_text("class Outer:\n" + _function("method", 30, "    "))
    assert cfl.main(["--max", "20", str(tmp_path)]) == 1
    assert capsys.readouterr().out.strip().endswith("Outer.method 31")


def test_a_file_that_does_not_parse_is_one_line(tmp_path, capsys):
    (tmp_path / "bad.py").write_text("def broken(:\n")
    assert cfl.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("check_function_length: ") and "bad.py:1: not valid Python" in err and err.count("\n") == 1
