from django.urls import path

from allocator import views_editor

urlpatterns = [
    path("editor/fields", views_editor.editor_fields, name="editor-fields"),
    path("editor/words", views_editor.editor_words, name="editor-words"),
    path("editor/format", views_editor.editor_format, name="editor-format"),
]
