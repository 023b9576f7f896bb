"""Run the Python tests and print one JSON report on stdout (after the human-readable unittest text on
stderr): {"tests": [{"id", "status", "message"}], "ran", "passed", "failed"}. Exit status 0 only if
every test passed. Used by packages/deploy/test/python-model.test.ts and `npm run test:python`."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class JsonResult(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.records.append({"id": test.id(), "status": "passed", "message": ""})

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.records.append({"id": test.id(), "status": "failed", "message": self._exc_info_to_string(err, test)})

    def addError(self, test, err):
        super().addError(test, err)
        self.records.append({"id": test.id(), "status": "failed", "message": self._exc_info_to_string(err, test)})

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.records.append({"id": test.id(), "status": "skipped", "message": reason})


def main():
    sys.dont_write_bytecode = True
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=JsonResult)
    result = runner.run(suite)
    passed = sum(1 for r in result.records if r["status"] == "passed")
    report = {
        "tests": result.records,
        "ran": result.testsRun,
        "passed": passed,
        "failed": result.testsRun - passed,
    }
    print(json.dumps(report))
    return 0 if result.wasSuccessful() and not result.skipped else 1


if __name__ == "__main__":
    sys.exit(main())
