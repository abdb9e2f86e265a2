"""The pool: real bugs of projects no rule was written against, built into a cache.

Cases are never committed: :mod:`.build` makes them from public mirrors (the
``fetch`` tool's ``/work/.mirror``) into ``~/.cache/fixbugs/pool`` in the format
of ``../shared/bugs/README.md``, plus the user's own issue text where one exists.
:mod:`.outcome` is what each source reports per case (built, or skipped and
why). Nothing is re-exported here: import from the module.
"""
