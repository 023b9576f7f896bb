'use client';

import { useEffect, useId, useRef, useState } from 'react';
import type { KeyboardEvent } from 'react';
import { captureFrame, useCamera } from '@/lib/use-camera';
import type { CameraProblem } from '@/lib/use-camera';

/** The name the captured photo is sent under. */
export const CAMERA_FILE_NAME = 'camera.jpg';

function problemText(problem: CameraProblem): { title: string; body: string } {
  const fallback = 'Choosing, dropping or pasting a photo still works.';
  switch (problem) {
    case 'denied':
      return {
        title: 'Camera access is blocked.',
        body: `Allow the camera for this site (the camera icon in the address bar, or the site settings), then try again. ${fallback}`,
      };
    case 'no-camera':
      return {
        title: 'No camera found.',
        body: `Connect a camera or check that it is switched on, then try again. ${fallback}`,
      };
    case 'unsupported':
      return {
        title: 'This browser cannot use a camera here.',
        body: `${
          window.isSecureContext
            ? 'It gives web pages no camera access.'
            : 'The live camera needs a secure (https) connection.'
        } ${fallback}`,
      };
    case 'busy':
      return {
        title: 'The camera is in use.',
        body: `Another app or tab may be using it (a video call?). Close it, then try again. ${fallback}`,
      };
    case 'stopped':
      return {
        title: 'The camera stopped.',
        body: `It was disconnected or switched off. Reconnect it, then try again. ${fallback}`,
      };
    case 'failed':
      return { title: 'The camera could not start.', body: fallback };
  }
}

const BUTTON = 'min-h-11 rounded-lg px-4 py-2 font-semibold';
const PRIMARY = `${BUTTON} bg-emerald-800 text-white shadow-sm hover:bg-emerald-900 aria-disabled:cursor-not-allowed aria-disabled:opacity-60`;
const SECONDARY = `${BUTTON} border border-emerald-800 bg-white text-emerald-900 hover:bg-emerald-50`;

/**
 * Live camera: preview, capture, retake, mirror, close. The camera is on only while the preview
 * shows: it is switched off once the photo is taken (Retake opens it again), on Close, on unmount
 * and while the page is hidden.
 *
 * Mirroring: a user-facing camera (a laptop's, or unknown) is previewed mirrored, like a mirror;
 * a rear camera is not. The toggle flips the preview and the still shown here alike, so the frame
 * does not jump at capture; the photo that is classified (and stored with feedback) is never
 * mirrored, so it shows the scene as it is and any writing in it reads the right way round.
 */
export function CameraPanel({ onPhoto, onClose }: { onPhoto: (file: File) => void; onClose: () => void }) {
  const camera = useCamera();
  const { start, stop } = camera;
  const video = useRef<HTMLVideoElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const captureButton = useRef<HTMLButtonElement>(null);
  const retakeButton = useRef<HTMLButtonElement>(null);
  const [ready, setReady] = useState(false);
  const [still, setStill] = useState<string | null>(null);
  const [mirrorChoice, setMirrorChoice] = useState<boolean | null>(null);
  const [captureError, setCaptureError] = useState<string | null>(null);
  const [focusNext, setFocusNext] = useState<'capture' | 'retake' | null>(null);
  const headingId = useId();
  const mirrorHintId = useId();
  const mirrored = mirrorChoice ?? camera.facingMode !== 'environment';
  const mirrorStyle = mirrored ? { transform: 'scaleX(-1)' } : undefined;

  // Open the camera with the panel; the hook stops it on unmount.
  useEffect(() => {
    start();
    heading.current?.focus();
    return stop;
  }, [start, stop]);

  const stream = camera.state.status === 'live' ? camera.state.stream : null;
  useEffect(() => {
    const v = video.current;
    setReady(false);
    if (!v) return;
    v.srcObject = stream;
    if (stream) v.play().catch(() => undefined); // autoplay of a muted video; `playing` sets ready
    return () => {
      v.srcObject = null;
    };
  }, [stream]);

  // The still's object URL lives as long as the still is shown.
  useEffect(() => (still ? () => URL.revokeObjectURL(still) : undefined), [still]);

  useEffect(() => {
    if (focusNext === 'capture') captureButton.current?.focus();
    if (focusNext === 'retake') retakeButton.current?.focus();
    if (focusNext) setFocusNext(null);
  }, [focusNext]);

  const capture = async () => {
    const v = video.current;
    if (!v || !ready) return;
    setCaptureError(null);
    try {
      const blob = await captureFrame(v);
      setStill(URL.createObjectURL(blob));
      stop();
      setFocusNext('retake');
      onPhoto(new File([blob], CAMERA_FILE_NAME, { type: 'image/jpeg', lastModified: Date.now() }));
    } catch (err) {
      setCaptureError((err as Error).message);
    }
  };

  /** Back to the live preview (after a capture, or a problem), focus on Capture. */
  const restart = () => {
    setStill(null);
    setCaptureError(null);
    start();
    setFocusNext('capture');
  };

  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      onClose();
    }
  };

  const s = camera.state;
  const view = still
    ? 'captured'
    : s.status === 'error'
      ? s.problem
      : s.status === 'idle'
        ? 'starting'
        : s.status;
  const showVideo = !still && s.status === 'live';
  const problem = s.status === 'error' && !still ? problemText(s.problem) : null;
  const status =
    view === 'captured'
      ? 'Photo taken. Retake it if it is not right.'
      : view === 'paused'
        ? 'Camera paused while the page is hidden.'
        : view === 'live' && ready
          ? 'Camera on. Frame the dish, then press Capture.'
          : view === 'live' || view === 'starting'
            ? 'Starting the camera… If your browser asks, allow the camera.'
            : '';

  return (
    <section
      id="camera-panel"
      aria-labelledby={headingId}
      data-testid="camera-panel"
      data-state={view}
      onKeyDown={onKeyDown}
      className="rounded-xl border border-stone-300 bg-white p-4 shadow-sm"
    >
      <h3 id={headingId} ref={heading} tabIndex={-1} className="mb-3 text-base font-semibold">
        Camera
      </h3>
      {problem ? (
        <div
          role="alert"
          data-testid="camera-problem"
          className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-950"
        >
          <p className="font-semibold">{problem.title}</p>
          <p className="mt-1 text-sm">{problem.body}</p>
          {s.status === 'error' && s.problem === 'failed' && s.detail && (
            <p className="mt-1 text-xs text-red-900">{s.detail}</p>
          )}
        </div>
      ) : (
        <div className="relative flex aspect-[4/3] w-full items-center justify-center overflow-hidden rounded-lg bg-slate-900">
          <video
            ref={video}
            muted
            playsInline
            autoPlay
            aria-label="Live camera preview"
            data-testid="camera-video"
            onPlaying={() => setReady(true)}
            onLoadedData={(e) => setReady(e.currentTarget.videoWidth > 0)}
            style={mirrorStyle}
            className={`h-full w-full object-contain ${showVideo ? '' : 'hidden'}`}
          />
          {still && (
            <img
              src={still}
              alt="The photo you took"
              data-testid="camera-still"
              style={mirrorStyle}
              className="h-full w-full object-contain"
            />
          )}
          {!still && !(showVideo && ready) && (
            <span
              aria-hidden="true"
              className="absolute h-8 w-8 animate-spin rounded-full border-4 border-white/80 border-t-transparent motion-reduce:animate-none"
            />
          )}
        </div>
      )}
      <p role="status" className="mt-2 text-sm text-slate-700 empty:mt-0">
        {status}
      </p>
      {captureError && (
        <p role="alert" className="mt-1 text-sm text-red-900">
          Could not take the photo: {captureError}
        </p>
      )}
      <div className="mt-3 flex flex-wrap items-center gap-2">
        {problem ? (
          <button type="button" onClick={restart} className={PRIMARY}>
            Try again
          </button>
        ) : still ? (
          <button ref={retakeButton} type="button" onClick={restart} className={PRIMARY}>
            Retake
          </button>
        ) : (
          <button
            ref={captureButton}
            type="button"
            onClick={() => void capture()}
            aria-disabled={!ready || undefined}
            className={PRIMARY}
          >
            Capture
          </button>
        )}
        {!problem && (
          <button
            type="button"
            aria-pressed={mirrored}
            aria-describedby={mirrorHintId}
            onClick={() => setMirrorChoice(!mirrored)}
            className={SECONDARY}
          >
            Mirror view
          </button>
        )}
        <button type="button" onClick={onClose} className={`${SECONDARY} ml-auto`}>
          Close camera
        </button>
      </div>
      {!problem && (
        <p id={mirrorHintId} className="mt-2 text-xs text-slate-600">
          Mirroring changes only this view: the photo is sent as the camera sees it.
        </p>
      )}
    </section>
  );
}
