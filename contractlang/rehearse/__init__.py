"""`contractlang rehearse`: interrupt a real job on this machine, as a spot provider would, and
bill what happened under each draft (docs/rehearse.md).

    from contractlang.rehearse import RehearsalSettings, mock_command, rehearse
    argv, shown = mock_command()
    report = rehearse(["rulesets/aws-ec2-spot-linux.spot"], RehearsalSettings(argv, shown))
    report.rehearsals[0].record.allocations    # what happened
    report.rehearsals[0].trace                 # as a trace (docs/trace.md)
    report.drafts()[0][0].totals.net_minor     # what it costs
"""

from __future__ import annotations

from contractlang.rehearse.results import Rehearsal, RehearsalReport
from contractlang.rehearse.run import rehearse
from contractlang.rehearse.settings import AllocationSpec, RehearsalSettings, mock_command

__all__ = [
    "AllocationSpec",
    "Rehearsal",
    "RehearsalReport",
    "RehearsalSettings",
    "mock_command",
    "rehearse",
]
