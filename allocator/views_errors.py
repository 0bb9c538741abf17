"""The page a server error shows: the 500 template in the request's language, and nothing of the error."""
from django.http import HttpResponseServerError
from django.template import loader


def server_error(request):
    """`handler500`: LocaleMiddleware has already chosen the language; the template reads no other
    context, so a broken page or context processor cannot break the error page too."""
    return HttpResponseServerError(loader.get_template("500.html").render())
