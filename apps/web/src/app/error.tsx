'use client';

export default function ErrorPage({ reset }: { error: Error; reset: () => void }) {
  return (
    <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-900">
      <h1 className="text-lg font-semibold">Something went wrong showing this page.</h1>
      <button
        type="button"
        onClick={reset}
        className="mt-3 rounded-md bg-red-800 px-4 py-2 font-medium text-white"
      >
        Try again
      </button>
    </div>
  );
}
