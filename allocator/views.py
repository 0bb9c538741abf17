from django.http import HttpResponse
from django.views.decorators.http import require_GET


@require_GET
def index(request):
    return HttpResponse("DRA Playground: the web page is being built; use `python manage.py allocate`.")
