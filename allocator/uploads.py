"""A scenario opened as a file on the page arrives as an upload (the `scenario-file` field).

Django keeps no limit on uploaded files, so this handler counts what arrives and stops
receiving past the scenario limit: nothing larger is held in memory or written to disk.
"""
from __future__ import annotations

from django.core.files.uploadhandler import FileUploadHandler, StopUpload

from allocator.run_settings import MAX_SCENARIO_BYTES


class ScenarioSizeLimit(FileUploadHandler):
    """First in FILE_UPLOAD_HANDLERS: passes data on until an upload exceeds the limit, then
    marks the request (`request.upload_too_large`) and stops reading the body."""

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > MAX_SCENARIO_BYTES:
            self.request.upload_too_large = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handler keeps the file
