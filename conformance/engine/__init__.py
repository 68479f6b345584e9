"""The engine: ``conformance.engine.run.run(settings)`` yields events and ends in one ``RunResult``; ``rejudge`` does
the same from a saved wire log. The package imports nothing itself: a command that only judges a saved stream
(``inspect``) imports ``conformance.engine.inspect`` without the HTTP client and the runner."""
